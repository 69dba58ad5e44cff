import { createGrpcWire, type GrpcWire, type GrpcWireAnswer } from '../../a2a/grpc-wire.js';
import type { ConformContext } from '../check.js';
import { serviceParameters, type Endpoint, type WireExchange, type WireFrame } from './wire.js';
import { isJsonObject } from '../../shared/json.js';

/**
 * The ACMP checks' calls over gRPC (A2A v1.0 §5, the card's `GRPC` interface): the same exchanges as over
 * JSON-RPC — frames in the JSON-RPC shape, timestamped on arrival — through the SDK's gRPC client
 * (src/a2a/grpc-wire.ts). A gRPC status is a frame `{error: {status, reason, message}}`, as a JSON-RPC
 * error is; an interface that does not answer at all throws, and the check fails with that evidence.
 */

type Json = Record<string, unknown>;

const clients = new WeakMap<ConformContext, Map<string, Promise<GrpcWire>>>();

/** One gRPC client per run and interface (one channel, as a buyer would hold). */
function clientFor(ctx: ConformContext, url: string): Promise<GrpcWire> {
  let byUrl = clients.get(ctx);
  if (!byUrl) clients.set(ctx, (byUrl = new Map<string, Promise<GrpcWire>>()));
  let client = byUrl.get(url);
  if (!client) byUrl.set(url, (client = createGrpcWire({ url, card: ctx.card, caCert: ctx.caCert })));
  return client;
}

/** The `message` of SendMessage params, which is all the kit sends (`{message}`). */
function messageOf(params: unknown): Json {
  return isJsonObject(params) && isJsonObject(params.message) ? params.message : {};
}

const statusOf = (answer: GrpcWireAnswer): string =>
  'error' in answer ? `gRPC ${answer.error.status}` : 'gRPC OK';

/** SendMessage over gRPC. */
export async function grpcCall(
  ctx: ConformContext,
  call: { endpoint: Endpoint; method: string; params: unknown },
): Promise<WireExchange> {
  const started = Date.now();
  const client = await clientFor(ctx, call.endpoint.url);
  const signal = AbortSignal.timeout(ctx.timeoutMs);
  const answer = await client.send(messageOf(call.params), { headers: serviceParameters(ctx), signal });
  return {
    status: statusOf(answer),
    contentType: 'application/grpc',
    frames: [{ atMs: Date.now() - started, body: answer }],
  };
}

/**
 * SendStreamingMessage over gRPC: each message of the server stream is a frame, timestamped on arrival;
 * `onFrame` sees it as it arrives. The stream may be idle at most `ctx.timeoutMs` between messages.
 */
export async function grpcStream(
  ctx: ConformContext,
  call: { endpoint: Endpoint; params: unknown; onFrame?: (frame: WireFrame) => void },
): Promise<WireExchange> {
  const started = Date.now();
  const client = await clientFor(ctx, call.endpoint.url);
  const idle = new AbortController();
  let timer = setTimeout(
    () => idle.abort(new Error(`no gRPC message for ${ctx.timeoutMs} ms`)),
    ctx.timeoutMs,
  );
  const frames: WireFrame[] = [];
  let status = 'gRPC OK';
  try {
    const options = { headers: serviceParameters(ctx), signal: idle.signal };
    for await (const answer of client.stream(messageOf(call.params), options)) {
      clearTimeout(timer);
      timer = setTimeout(
        () => idle.abort(new Error(`no gRPC message for ${ctx.timeoutMs} ms`)),
        ctx.timeoutMs,
      );
      status = statusOf(answer);
      const frame = { atMs: Date.now() - started, body: answer as Json };
      frames.push(frame);
      call.onFrame?.(frame);
    }
    return { status, contentType: 'application/grpc', frames };
  } finally {
    clearTimeout(timer);
  }
}

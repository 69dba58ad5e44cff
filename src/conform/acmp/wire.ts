import { ACMP_EXTENSION_URI } from '../../acmp/wire/constants.js';
import { isJsonObject } from '../../shared/json.js';
import type { ConformContext, ConformTransport } from '../check.js';
import { grpcCall, grpcStream } from './grpc-calls.js';

/**
 * Raw A2A v1.0 for the ACMP checks (docs/conformance.md "ACMP checks"): the kit must see what the agent
 * sent — media types, root keys, metadata, SSE framing — so over JSON-RPC and HTTP+JSON it reads the wire
 * itself instead of the SDK client, which normalises all of them; over gRPC it reads the protobuf the
 * SDK's gRPC client decodes, rendered as ProtoJSON (src/conform/acmp/grpc-calls.ts).
 */

type Json = Record<string, unknown>;

/** One response as received, in the JSON-RPC shape (`{result}` or `{error}`), with its arrival time (ms since the call started). */
export interface WireFrame {
  readonly atMs: number;
  readonly body: Json;
}

/** What one call returned: its frames (one for SendMessage, one per SSE event or gRPC message for streams). */
export interface WireExchange {
  /** The call's status as evidence reads it: `HTTP 200`, `gRPC OK`, `gRPC UNAUTHENTICATED (16)`. */
  readonly status: string;
  /** The HTTP content type (`application/grpc` over gRPC). */
  readonly contentType: string;
  readonly frames: readonly WireFrame[];
}

/** The A2A transports the kit calls (A2A v1.0 §5): all three bindings. */
export type WireTransport = ConformTransport;

/** The transports in the order the kit calls them. */
export const WIRE_TRANSPORTS: readonly WireTransport[] = ['JSONRPC', 'HTTP+JSON', 'GRPC'];

/** Where to call: a transport and its URL (`host:port` for gRPC). */
export interface Endpoint {
  readonly transport: WireTransport;
  readonly url: string;
}

/** The card's A2A v1.0 interfaces, one per transport (the first listed), JSON-RPC first. */
export function endpointsOf(card: unknown): Endpoint[] {
  const interfaces: unknown[] =
    isJsonObject(card) && Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : [];
  const found: Endpoint[] = [];
  for (const transport of WIRE_TRANSPORTS) {
    const match = interfaces.find(
      (i): i is Json & { url: string } =>
        isJsonObject(i) &&
        i.protocolBinding === transport &&
        typeof i.url === 'string' &&
        !(typeof i.protocolVersion === 'string' && i.protocolVersion.startsWith('0.')),
    );
    if (match) found.push({ transport, url: match.url });
  }
  return found;
}

/**
 * The service parameters of every call (HTTP headers, gRPC metadata): A2A v1.0, the ACMP extension
 * activated (A2A §4.6, seed 000 §2), the operator's token.
 */
export function serviceParameters(ctx: ConformContext): Record<string, string> {
  return {
    'A2A-Version': '1.0',
    'A2A-Extensions': ACMP_EXTENSION_URI,
    ...(ctx.token ? { authorization: `Bearer ${ctx.token}` } : {}),
  };
}

function headers(ctx: ConformContext, accept: string): Record<string, string> {
  return { 'content-type': 'application/json', accept, ...serviceParameters(ctx) };
}

let rpcIds = 0;

/** The REST route of an A2A method the kit calls (A2A v1.0 HTTP+JSON binding). */
const REST_ROUTE: Record<string, string> = {
  SendMessage: 'message:send',
  SendStreamingMessage: 'message:stream',
};

/** The URL and body of one call over the endpoint's transport. */
function request(endpoint: Endpoint, method: string, params: unknown): { url: string; body: string } {
  if (endpoint.transport === 'JSONRPC')
    return { url: endpoint.url, body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcIds, method, params }) };
  const route = REST_ROUTE[method] ?? method;
  return { url: `${endpoint.url.replace(/\/+$/, '')}/${route}`, body: JSON.stringify(params) };
}

/**
 * A response body in the JSON-RPC shape every check reads: REST answers `{task}` / `{message}` bare (and
 * errors with a non-2xx status), so they are wrapped as `{result}` / `{error}`.
 */
function normalised(endpoint: Endpoint, status: number, body: Json): Json {
  if (endpoint.transport === 'JSONRPC') return body;
  return status >= 200 && status < 300 ? { result: body } : { error: body };
}

function post(ctx: ConformContext, call: { url: string; body: string; accept: string; signal: AbortSignal }) {
  return (ctx.fetch ?? fetch)(call.url, {
    method: 'POST',
    headers: headers(ctx, call.accept),
    body: call.body,
    signal: call.signal,
  });
}

/** One call expecting one JSON body (SendMessage). */
export async function callRpc(
  ctx: ConformContext,
  call: { endpoint: Endpoint; method: string; params: unknown },
): Promise<WireExchange> {
  if (call.endpoint.transport === 'GRPC') return grpcCall(ctx, call);
  const started = Date.now();
  const { url, body: sent } = request(call.endpoint, call.method, call.params);
  const signal = AbortSignal.timeout(ctx.timeoutMs);
  const response = await post(ctx, { url, body: sent, accept: 'application/json', signal });
  const body = parseObject(await response.text());
  return {
    status: `HTTP ${response.status}`,
    contentType: response.headers.get('content-type') ?? '',
    frames: body
      ? [{ atMs: Date.now() - started, body: normalised(call.endpoint, response.status, body) }]
      : [],
  };
}

/**
 * SendStreamingMessage: reads the SSE stream event by event, timestamping each (liveness is measured on
 * arrival). `onFrame` sees each frame as it arrives (the cancel check sends its cancel from there). The
 * stream may be idle at most `ctx.timeoutMs` between events.
 */
export async function streamRpc(
  ctx: ConformContext,
  call: { endpoint: Endpoint; params: unknown; onFrame?: (frame: WireFrame) => void },
): Promise<WireExchange> {
  if (call.endpoint.transport === 'GRPC') return grpcStream(ctx, call);
  const started = Date.now();
  const idle = new AbortController();
  let timer = setTimeout(() => idle.abort(), ctx.timeoutMs);
  const frames: WireFrame[] = [];
  try {
    const { url, body: sent } = request(call.endpoint, 'SendStreamingMessage', call.params);
    const response = await post(ctx, { url, body: sent, accept: 'text/event-stream', signal: idle.signal });
    const contentType = response.headers.get('content-type') ?? '';
    const wrap = (body: Json): Json => normalised(call.endpoint, response.status, body);
    const status = `HTTP ${response.status}`;
    if (!response.body) return { status, contentType, frames };
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
      clearTimeout(timer);
      timer = setTimeout(() => idle.abort(), ctx.timeoutMs);
      buffer += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        const body = parseObject(sseData(event));
        if (!body) continue;
        const frame = { atMs: Date.now() - started, body: wrap(body) };
        frames.push(frame);
        call.onFrame?.(frame);
      }
    }
    // A non-SSE answer (an error body) or an unterminated last event.
    const tail = parseObject(sseData(buffer)) ?? parseObject(buffer);
    if (tail) frames.push({ atMs: Date.now() - started, body: wrap(tail) });
    return { status, contentType, frames };
  } finally {
    clearTimeout(timer);
  }
}

/** The `data:` lines of one SSE event, joined (comments and other fields ignored). */
function sseData(event: string): string {
  return event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
    .join('\n');
}

function parseObject(text: string): Json | undefined {
  if (text.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

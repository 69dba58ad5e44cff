import { readFileSync } from 'node:fs';
import { a2aTaskIds } from '../../src/a2a/acmp/buyer.js';
import { ACMP_EXTENSION_URI, ACMP_MEDIA_TYPE } from '../../src/acmp/wire/constants.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import type { AcmpCapability, HandlerContext } from '../../src/acmp/provider/provider-types.js';
import { acmpModule, type AcmpModuleOptions } from '../../src/server/modules/acmp.js';
import type { HostFlags } from '../../src/server/config.js';
import { postJson, startTestHost } from '../helpers/host.js';
import {
  clientTransport,
  grpcCall,
  grpcSend,
  grpcStream,
  transportFlags,
  type A2ATransport,
} from '../helpers/transports.js';

/**
 * Helpers of the ACMP-over-A2A tests: a host with the ACMP module, raw JSON-RPC and SSE, message
 * builders in the seed's spelling, and a counting capability.
 */

export const V1 = { 'A2A-Version': '1.0' };
/** A2A v1.0 with the ACMP extension activated (A2A §4.6, seed §2). */
export const ACTIVATED = { ...V1, 'A2A-Extensions': ACMP_EXTENSION_URI };

/** A fixture file under test/fixtures, parsed. */
export function fixture<T = Record<string, unknown>>(path: string): T {
  return JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')) as T;
}

/** A globally unique task id for one test, short enough for every task store (36 characters). */
export function newTaskId(): string {
  return a2aTaskIds.newId('task');
}

/** A JSON-RPC 2.0 request. */
export function rpc(method: string, params: unknown, id: number | string = 1): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method, params };
}

/** A user message in the seed's spelling carrying one ACMP data part (override any field). */
export function acmpMessage(
  root: Record<string, unknown>,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const params = root.params as { task_id?: string } | undefined;
  return {
    message_id: `msg_${crypto.randomUUID()}`,
    role: 'user',
    ...(params?.task_id ? { task_id: params.task_id } : {}),
    parts: [{ data: root, media_type: ACMP_MEDIA_TYPE }],
    ...overrides,
  };
}

/** An `acmp/invoke` root with a fresh task_id (override any params field). */
export function invokeRoot(params: Record<string, unknown> = {}): {
  acmp_method: 'acmp/invoke';
  params: Record<string, unknown>;
} {
  return {
    acmp_method: 'acmp/invoke',
    params: {
      task_id: newTaskId(),
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'Revenue grew 12% YoY.' },
      max_price_cu: 0.005,
      ...params,
    },
  };
}

/** A test host and the A2A transport its raw helpers ({@link sendRaw}, {@link streamRaw}, {@link callRaw}) use. */
export type AcmpTestHost = Awaited<ReturnType<typeof startTestHost>> & { transport: A2ATransport };

/** What the raw helpers need of a host: its URL and, for gRPC, its gRPC address. JSON-RPC when no transport is named. */
export interface RawHost {
  url: string;
  transport?: A2ATransport;
  grpcUrl?: string | undefined;
}

/**
 * A host serving ACMP over A2A on 127.0.0.1:0 (demo capabilities with fast steps unless given). With
 * `transport: 'grpc'` it also serves gRPC, and the raw helpers speak gRPC to it.
 */
export async function acmpHost(
  options: Partial<AcmpModuleOptions> & {
    flags?: HostFlags;
    dataDir?: string;
    migrate?: boolean;
    transport?: A2ATransport;
  } = {},
): Promise<AcmpTestHost> {
  const { flags, dataDir, migrate, transport = 'jsonrpc', ...moduleOptions } = options;
  const module = acmpModule({
    capabilities: demoCapabilities({ stepMs: 5 }),
    heartbeatIntervalMs: 1000,
    ...moduleOptions,
  });
  const host = await startTestHost({
    modules: [module],
    flags: { ...transportFlags(transport), ...flags },
    dataDir,
    migrate,
  });
  return { ...host, transport };
}

/** Options for {@link createAcmpBuyer} reaching a host over its test transport. */
export function buyerOptions(host: RawHost): { agentUrl: string; transport: 'JSONRPC' | 'GRPC' } {
  return { agentUrl: host.url, transport: clientTransport(host.transport ?? 'jsonrpc') };
}

function isGrpc(host: RawHost): host is RawHost & { transport: 'grpc'; grpcUrl: string | undefined } {
  return host.transport === 'grpc';
}

/** The JSON-RPC endpoint of a host. */
export function jsonRpcUrl(host: { url: string }): string {
  return `${host.url}/a2a/jsonrpc`;
}

/** SendMessage over raw JSON-RPC (or the SDK's gRPC client); returns the JSON-RPC response body. */
export async function sendRaw(
  host: RawHost,
  message: unknown,
  headers: Record<string, string> = ACTIVATED,
  configuration?: Record<string, unknown>,
): Promise<RpcBody> {
  if (isGrpc(host))
    return await grpcSend({ ...host, grpcUrl: host.grpcUrl }, message, headers, configuration);
  return (
    await postJson(
      jsonRpcUrl(host),
      rpc('SendMessage', { message, ...(configuration ? { configuration } : {}) }),
      headers,
    )
  ).body as RpcBody;
}

/** GetTask or CancelTask over the host's test transport; the JSON-RPC response body. */
export async function callRaw(
  host: RawHost,
  method: 'GetTask' | 'CancelTask',
  id: string,
  headers: Record<string, string> = ACTIVATED,
): Promise<RpcBody> {
  if (isGrpc(host)) return await grpcCall({ ...host, grpcUrl: host.grpcUrl }, method, id, headers);
  return (await postJson(jsonRpcUrl(host), rpc(method, { id }), headers)).body as RpcBody;
}

/** A JSON-RPC response body as the tests read it. */
export interface RpcBody {
  result?: { message?: WireMessage; task?: WireTask } & Partial<WireTask>;
  error?: { code: number; message: string; data?: unknown };
}

export interface WireMessage {
  role: string;
  taskId?: string;
  metadata?: unknown;
  parts: { data?: Record<string, unknown>; mediaType?: string }[];
}

export interface WireTask {
  id: string;
  status: { state: string; message?: WireMessage };
  history?: WireMessage[];
}

/** The ACMP root of a SendMessage result: a refusal message, or the task's final status message. */
export function replyRoot(body: RpcBody): Record<string, unknown> | undefined {
  const message = body.result?.message ?? body.result?.task?.status.message ?? body.result?.status?.message;
  return message?.parts[0]?.data;
}

/** The `acmp_error` of a SendMessage result. */
export function replyError(
  body: RpcBody,
): { code: number; message: string; data?: Record<string, unknown> } | undefined {
  return replyRoot(body)?.acmp_error as
    { code: number; message: string; data?: Record<string, unknown> } | undefined;
}

/**
 * SubscribeToTask over the host's test transport: the raw answer (the SSE text or JSON-RPC error body; on
 * gRPC the events received, or the error), for tests that look at what it carries.
 */
export async function subscribeRaw(
  host: RawHost,
  id: string,
  headers: Record<string, string> = ACTIVATED,
): Promise<unknown> {
  if (!isGrpc(host))
    return (
      await postJson(jsonRpcUrl(host), rpc('SubscribeToTask', { id }), {
        ...headers,
        accept: 'text/event-stream',
      })
    ).body;
  const events: unknown[] = [];
  try {
    for await (const event of grpcStream({ ...host, grpcUrl: host.grpcUrl }, { subscribe: id }, headers))
      events.push(event);
  } catch (error) {
    return { events, error: String(error) };
  }
  return { events };
}

/** SendStreamingMessage over raw JSON-RPC + SSE (or gRPC server streaming): every `result`, in order. */
export async function* streamRaw(
  host: RawHost,
  message: unknown,
  headers: Record<string, string> = ACTIVATED,
): AsyncGenerator<Record<string, unknown>> {
  if (isGrpc(host)) {
    yield* grpcStream({ ...host, grpcUrl: host.grpcUrl }, { message }, headers);
    return;
  }
  const res = await fetch(jsonRpcUrl(host), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(rpc('SendStreamingMessage', { message })),
  });
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of res.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('');
      if (data) yield (JSON.parse(data) as { result: Record<string, unknown> }).result;
    }
  }
}

/** The ACMP root carried by one stream result (status-update message, message, or task status). */
export function streamRoot(result: Record<string, unknown>): Record<string, unknown> | undefined {
  const update = result.statusUpdate as { status: { message?: WireMessage } } | undefined;
  const message =
    update?.status.message ??
    (result.message as WireMessage | undefined) ??
    (result.task as WireTask | undefined)?.status.message;
  return message?.parts[0]?.data;
}

/**
 * A capability counting its executions (`started` resolves on the first); it waits `ms` (honouring the
 * signal) and echoes the input.
 */
export function countingCapability(
  id = 'count-runs',
  ms = 20,
): AcmpCapability & { runs: () => number; started: Promise<void> } {
  let runs = 0;
  let markStarted = (): void => {};
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  return {
    id,
    price: 0.001,
    runs: () => runs,
    started,
    async handler(input, ctx: HandlerContext) {
      runs += 1;
      markStarted();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(ctx.signal.reason as Error);
        });
      });
      return { type: 'json', data: { echo: input.data, run: runs } };
    },
  };
}

/** A streaming capability yielding a text chunk every `ms` until its signal aborts; records that abort. */
export function tickerCapability(
  id = 'ticker',
  ms = 10,
): AcmpCapability & { aborted: () => boolean; yielded: () => number } {
  let aborted = false;
  let yielded = 0;
  return {
    id,
    price: 0.001,
    aborted: () => aborted,
    yielded: () => yielded,
    async *handler(_input, ctx: HandlerContext) {
      ctx.signal.addEventListener('abort', () => (aborted = true));
      while (!ctx.signal.aborted) {
        await new Promise((resolve) => setTimeout(resolve, ms));
        if (ctx.signal.aborted) return;
        yielded += 1;
        yield { type: 'text', data: `tick ${yielded} ` };
      }
    },
  };
}

/** Raw `acmp/cancel` over SendMessage, on the task (Layer 1 §3.7). */
export function cancelMessage(taskId: string, reason = 'buyer changed its mind'): Record<string, unknown> {
  return acmpMessage({ acmp_method: 'acmp/cancel', params: { task_id: taskId, reason } });
}

/** The code and data of the ACMP error `work` fails with; fails the test when it succeeds or throws anything else. */
export async function codeOf(
  work: Promise<unknown>,
): Promise<{ code: number; data: Record<string, unknown> }> {
  try {
    await work;
  } catch (error) {
    if (error instanceof AcmpError) return { code: error.code, data: error.data as Record<string, unknown> };
    throw error;
  }
  throw new Error('expected an ACMP error');
}

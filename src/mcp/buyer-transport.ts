import { ProtocolError, SdkHttpError, UnauthorizedError, type Client } from '@modelcontextprotocol/client';
import { z } from 'zod';
import type { AcmpBuyerTransport } from '../acmp/buyer/buyer.js';
import { ACMP_METHOD, MAX_TIMER_MS } from '../acmp/wire/constants.js';
import { ACMP_CODE, AcmpError, acmpErrorSpec } from '../acmp/wire/errors.js';
import { type AcmpEvent } from '../acmp/wire/messages.js';
import {
  AcmpResultSchema,
  HeartbeatParamsSchema,
  resolveInvoke,
  StreamChunkParamsSchema,
  type CancelParams,
  type InvokeParams,
} from '../acmp/wire/task-messages.js';
import { AsyncQueue } from '../shared/async.js';
import { LocalError } from '../shared/errors.js';
import { isJsonObject } from '../shared/json.js';

/** Results are read by the ACMP schema after MCP's own fields are set aside. */
const RawResult = z.looseObject({});
/** How much longer than `timeout_ms` the SDK waits for a result (the buyer core's own deadline fires first). */
const SDK_TIMEOUT_MARGIN_MS = 10_000;
/** How long after its stream ended an invoke may still receive the response parsed from that stream. */
const STREAM_END_GRACE_MS = 100;

type Sink = (event: AcmpEvent) => void;

/** Tells when the HTTP response stream of an invoke (by task_id) ended, normally or not. */
export interface InvokeStreamEnds {
  subscribe(taskId: string, onEnd: () => void): () => void;
}

/**
 * The buyer core's transport over MCP (docs/acmp-mcp-binding.md §4): `acmp/invoke` as a request whose
 * stream's `acmp/streamChunk` and `acmp/heartbeat` notifications reach the invoke with that `task_id`;
 * `acmp/cancel` as a notification (Layer 1 §3.7). Aborting a send aborts its request, which on Streamable
 * HTTP closes its stream and so cancels the task (MCP 2026-07-28 cancellation).
 *
 * Installs the client's `fallbackNotificationHandler`: it runs in arrival order, before the response that
 * follows the notifications, so chunks are never overtaken by their result.
 */
export function createMcpAcmpTransport(
  client: Client,
  watch: { streamEnds?: InvokeStreamEnds } = {},
): AcmpBuyerTransport {
  return new McpAcmpTransport(client, watch.streamEnds);
}

/** The buyer core's transport over MCP; see {@link createMcpAcmpTransport}. */
class McpAcmpTransport implements AcmpBuyerTransport {
  /** The sinks of the invokes in flight, by `task_id`. */
  private readonly sinks = new Map<string, Set<Sink>>();

  constructor(
    private readonly client: Client,
    private readonly streamEnds: InvokeStreamEnds | undefined,
  ) {
    client.fallbackNotificationHandler = (notification) => {
      const event = notificationEvent(notification.method, notification.params);
      if (event) for (const sink of this.sinks.get(event.params.task_id) ?? []) sink(event);
      return Promise.resolve();
    };
  }

  send(params: InvokeParams, options: { stream: boolean; signal: AbortSignal }): AsyncIterable<AcmpEvent> {
    let unsubscribe = (): void => {};
    const queue = new AsyncQueue<AcmpEvent>(() => unsubscribe());
    const offEvents = this.subscribe(params.task_id, (event) => queue.push(event));
    // The SDK leaves a request pending when its stream ends without the response (a host that stopped or
    // died): that is a transport failure the buyer core retries with the same task_id.
    const offEnd = this.streamEnds?.subscribe(params.task_id, () => {
      setTimeout(
        () => queue.fail(new LocalError('STREAM_CLOSED', 'the invoke stream ended without a result')),
        STREAM_END_GRACE_MS,
      );
    });
    unsubscribe = () => {
      offEvents();
      offEnd?.();
    };
    this.request(params, options.signal, { queue, unsubscribe });
    return queue;
  }

  async cancel(params: CancelParams, options?: { signal?: AbortSignal }): Promise<void> {
    options?.signal?.throwIfAborted();
    await this.client.notification({ method: ACMP_METHOD.cancel, params });
  }

  /** Sends the `acmp/invoke` request; its result or error ends the queue. */
  private request(
    params: InvokeParams,
    signal: AbortSignal,
    { queue, unsubscribe }: { queue: AsyncQueue<AcmpEvent>; unsubscribe: () => void },
  ): void {
    const timeout = Math.min(resolveInvoke(params).timeoutMs + SDK_TIMEOUT_MARGIN_MS, MAX_TIMER_MS);
    this.client.request({ method: ACMP_METHOD.invoke, params }, RawResult, { signal, timeout }).then(
      (raw) => {
        queue.push(resultEvent(raw, params.task_id));
        queue.end();
        unsubscribe();
      },
      (error: unknown) => {
        unsubscribe();
        const failure = classify(error);
        if (failure instanceof AcmpError) {
          queue.push({ kind: 'error', error: failure.toObject() });
          queue.end();
        } else queue.fail(failure);
      },
    );
  }

  private subscribe(taskId: string, sink: Sink): () => void {
    const set = this.sinks.get(taskId) ?? new Set<Sink>();
    this.sinks.set(taskId, set.add(sink));
    return () => {
      set.delete(sink);
      if (set.size === 0 && this.sinks.get(taskId) === set) this.sinks.delete(taskId);
    };
  }
}

/**
 * One Layer 6 request (flat negotiation over MCP, docs/acmp-mcp-binding.md §3): its result read by `schema`
 * once MCP's own fields are set aside.
 * @throws AcmpError the provider's refusal (-33xxx, -34xxx, -32602) or -33099 for a malformed result;
 *   LocalError `REFUSED` for other error answers; transport failures as the SDK reports them.
 */
export async function requestNegotiation<T>(
  client: Client,
  request: { method: string; params: Record<string, unknown>; schema: z.ZodType<T> },
  options?: { signal?: AbortSignal },
): Promise<T> {
  const { schema, ...message } = request;
  let raw: Record<string, unknown>;
  try {
    raw = await client.request(message, RawResult, options?.signal ? { signal: options.signal } : {});
  } catch (error) {
    throw classify(error);
  }
  const { resultType: _type, _meta: _ignored, ...result } = raw;
  const parsed = schema.safeParse(result);
  if (parsed.success) return parsed.data;
  throw new AcmpError(
    ACMP_CODE.internal,
    { reason: 'malformed_result' },
    { message: 'Provider protocol violation' },
  );
}

/** The provider event a notification carries; `undefined` for anything else (or a malformed one). */
function notificationEvent(
  method: string,
  params: unknown,
): Extract<AcmpEvent, { kind: 'chunk' | 'heartbeat' }> | undefined {
  if (method === ACMP_METHOD.streamChunk) {
    const parsed = StreamChunkParamsSchema.safeParse(withoutMeta(params));
    return parsed.success ? { kind: 'chunk', params: parsed.data } : undefined;
  }
  if (method === ACMP_METHOD.heartbeat) {
    const parsed = HeartbeatParamsSchema.safeParse(withoutMeta(params));
    return parsed.success ? { kind: 'heartbeat', params: parsed.data } : undefined;
  }
  return undefined;
}

/** The `acmp/invoke` result (Layer 1 §3.2) without MCP's `_meta`; a malformed one is a protocol violation. */
function resultEvent(raw: Record<string, unknown>, taskId: string): AcmpEvent {
  const parsed = AcmpResultSchema.safeParse(withoutMeta(raw));
  if (parsed.success) return { kind: 'result', result: parsed.data };
  const error = new AcmpError(
    ACMP_CODE.internal,
    { task_id: taskId, reason: 'malformed_result' },
    { message: 'Provider protocol violation' },
  );
  return { kind: 'error', error: error.toObject() };
}

/**
 * What a failed request means for the buyer core: a JSON-RPC error with an ACMP code is the provider's
 * `acmp/error` (Layer 1 §3.3); any other error answer (an MCP error, HTTP 4xx such as 401) is a refusal
 * retrying cannot fix; anything else (connection lost, HTTP 5xx) is a transport failure the core retries.
 */
export function classify(error: unknown): unknown {
  if (error instanceof ProtocolError) {
    if (acmpErrorSpec(error.code) !== undefined || (error.code <= -33000 && error.code > -34000)) {
      return new AcmpError(error.code, error.data, { message: error.message });
    }
    return new LocalError('REFUSED', `the provider refused the call: ${error.code} ${error.message}`, {
      cause: error,
    });
  }
  if (
    error instanceof UnauthorizedError ||
    (error instanceof SdkHttpError && error.status >= 400 && error.status < 500)
  ) {
    return new LocalError('REFUSED', 'the provider refused the call (HTTP 4xx)', { cause: error });
  }
  return error;
}

function withoutMeta(value: unknown): unknown {
  if (!isJsonObject(value) || !('_meta' in value)) return value;
  const copy = { ...value };
  delete copy._meta;
  return copy;
}

/**
 * Watches the response bodies of `acmp/invoke` POSTs through the fetch the SDK's Streamable HTTP transport
 * is given, so {@link createMcpAcmpTransport} learns when an invoke's stream ended (the SDK does not tell).
 */
export class InvokeStreamWatch implements InvokeStreamEnds {
  private readonly listeners = new Map<string, Set<() => void>>();

  subscribe(taskId: string, onEnd: () => void): () => void {
    const set = this.listeners.get(taskId) ?? new Set<() => void>();
    this.listeners.set(taskId, set.add(onEnd));
    return () => {
      set.delete(onEnd);
      if (set.size === 0 && this.listeners.get(taskId) === set) this.listeners.delete(taskId);
    };
  }

  /** A fetch that reports the end of every invoke response body it returns. */
  wrap(fetchImpl: typeof fetch): typeof fetch {
    return async (input, init) => {
      const response = await fetchImpl(input, init);
      const taskId = invokeTaskIdOf(init?.body);
      if (taskId === undefined || response.body === null) return response;
      const ended = (): void => {
        for (const listener of [...(this.listeners.get(taskId) ?? [])]) listener();
      };
      return new Response(watchedBody(response.body, ended), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };
  }
}

/** The task_id of an `acmp/invoke` request body, if that is what the body is. */
function invokeTaskIdOf(body: unknown): string | undefined {
  if (typeof body !== 'string' || !body.includes(ACMP_METHOD.invoke)) return undefined;
  try {
    const message: unknown = JSON.parse(body);
    if (!isJsonObject(message) || message.method !== ACMP_METHOD.invoke || !isJsonObject(message.params))
      return undefined;
    return typeof message.params.task_id === 'string' ? message.params.task_id : undefined;
  } catch {
    return undefined;
  }
}

/** The same bytes, with `ended` called once when the stream ends, fails or is cancelled. */
function watchedBody(body: ReadableStream<Uint8Array>, ended: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let done = false;
  const end = (): void => {
    if (done) return;
    done = true;
    ended();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await reader.read();
        if (next.done) {
          end();
          controller.close();
        } else controller.enqueue(next.value);
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}

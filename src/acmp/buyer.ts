import { sleep } from '../shared/async.js';
import type { Clock } from '../shared/clock.js';
import { isLocalError, LocalError } from '../shared/errors.js';
import { systemIds, type IdSource } from '../shared/ids.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { ACMP_METHOD } from './constants.js';
import { ACMP_CODE, AcmpError } from './errors.js';
import {
  CapabilityObjectSchema,
  InvokeParamsSchema,
  resolveInvoke,
  type AcmpEvent,
  type AcmpResult,
  type CancelParams,
  type CapabilityObject,
  type HeartbeatParams,
  type InvokeParams,
  type Payload,
  type StreamChunkParams,
} from './messages.js';
import { ChunkTracker } from './buyer-checks.js';
import { nextOrAbort, Watchdog } from './watchdog.js';

/** A provider message as the buyer receives it (the provider's {@link AcmpEvent}s, decoded by a binding). */
export type AcmpInbound = AcmpEvent;

/** What a binding (A2A later; loopback in tests) gives the buyer core. */
export interface AcmpBuyerTransport {
  /** Sends `acmp/invoke` and yields the provider's messages; ends after the result or error. */
  send(params: InvokeParams, options: { stream: boolean; signal: AbortSignal }): AsyncIterable<AcmpInbound>;
  /** Sends `acmp/cancel` (a notification: resolves once sent). */
  cancel(params: CancelParams, options?: { signal?: AbortSignal }): Promise<void>;
}

/** Invoke params with an optional task_id (the buyer core generates a globally unique one, §3.1). */
export type InvokeInput = Omit<InvokeParams, 'task_id'> & { task_id?: string };

/** What {@link AcmpBuyerCore.stream} yields: notifications, then the result with the full output. */
export type BuyerEvent =
  | { kind: 'chunk'; params: StreamChunkParams }
  | { kind: 'heartbeat'; params: HeartbeatParams }
  | { kind: 'result'; result: AcmpResult; output: Payload };

/** The transport-free buyer (Layer 1 §3, buyer side). */
export interface AcmpBuyerCore {
  /**
   * Invokes and resolves with the result; `output` is always filled in (reassembled when streamed).
   * @throws AcmpError (provider error, -33003 deadline/liveness, -33007 unadvertised feature, -33099
   *   protocol violation or exhausted transport retries); `signal.reason` on abort.
   */
  invoke(params: InvokeInput, options?: { signal?: AbortSignal }): Promise<AcmpResult>;
  /** Like invoke, yielding chunks and heartbeats first. Same errors, thrown from the iteration. */
  stream(params: InvokeInput, options?: { signal?: AbortSignal }): AsyncIterable<BuyerEvent>;
}

/** Options of {@link createAcmpBuyerCore}. */
export interface AcmpBuyerOptions {
  /** The provider's advertised capability object (Layer 1 §1 / A2A binding §2). */
  capabilityObject: CapabilityObject;
  transport: AcmpBuyerTransport;
  ids?: IdSource;
  /** Reserved for time-stamping; deadlines use timers so fake timers control them in tests. */
  clock?: Clock;
  logger?: Logger;
  /** Retries after a transport failure, with the same task_id (default 2; §3.1.1 makes it safe). */
  retries?: number;
  /** Base back-off between retries, multiplied by the attempt number (default 200 ms). */
  retryDelayMs?: number;
}

const CANCEL_WAIT_MS = 2000;

/**
 * Creates the buyer core. It never relies on an unadvertised feature (Layer 1 §1): `stream: true`
 * without `output_streaming`, or `input_stream`, fails locally with -33007 before anything is sent, and
 * a liveness window is kept only when `heartbeat_interval_ms` is advertised.
 * @throws LocalError `CONFIG_INVALID` for a malformed capability object.
 */
export function createAcmpBuyerCore(options: AcmpBuyerOptions): AcmpBuyerCore {
  const parsed = CapabilityObjectSchema.safeParse(options.capabilityObject);
  if (!parsed.success) throw new LocalError('CONFIG_INVALID', 'capability object is malformed');
  const capability = parsed.data;
  const { transport } = options;
  const ids = options.ids ?? systemIds;
  const logger = options.logger ?? silentLogger;
  const retries = options.retries ?? 2;
  const retryDelayMs = options.retryDelayMs ?? 200;
  const heartbeatMs = capability.features.heartbeat_interval_ms;
  // Layer 1 §3.6: recommended liveness window is 3 × heartbeat_interval_ms.
  const livenessMs = heartbeatMs === undefined ? undefined : 3 * heartbeatMs;

  const prepare = (input: InvokeInput): InvokeParams => {
    const candidate = { ...input, task_id: input.task_id ?? ids.newId('task') };
    const result = InvokeParamsSchema.safeParse(candidate);
    if (!result.success) throw new AcmpError(ACMP_CODE.invalidParams, { task_id: candidate.task_id });
    const params = result.data;
    const unsupported = (feature: string): AcmpError =>
      new AcmpError(ACMP_CODE.featureUnsupported, { task_id: params.task_id, feature });
    if (!capability.accepts.includes(ACMP_METHOD.invoke)) throw unsupported(ACMP_METHOD.invoke);
    if (params.stream === true && capability.features.output_streaming !== true)
      throw unsupported('output_streaming');
    // The A2A binding declines input streaming (§3.3); this core never sends acmp/inputChunk.
    if (params.input_stream === true) throw unsupported('input_streaming');
    return params;
  };

  const sendCancel = async (taskId: string, reason: string): Promise<void> => {
    if (!capability.accepts.includes(ACMP_METHOD.cancel)) return;
    try {
      await transport.cancel({ task_id: taskId, reason }, { signal: AbortSignal.timeout(CANCEL_WAIT_MS) });
    } catch (error) {
      logger.warn('acmp.buyer_cancel_failed', { task_id: taskId, ...errorFields(error) });
    }
  };

  async function* stream(
    input: InvokeInput,
    callOptions?: { signal?: AbortSignal },
  ): AsyncGenerator<BuyerEvent> {
    callOptions?.signal?.throwIfAborted();
    const params = prepare(input);
    const taskId = params.task_id;
    const watchdog = new Watchdog(taskId, resolveInvoke(params).timeoutMs, livenessMs);
    const signals = [watchdog.signal, ...(callOptions?.signal ? [callOptions.signal] : [])];
    const signal = AbortSignal.any(signals);
    const tracker = new ChunkTracker(taskId);
    // Once the provider showed life, the liveness window (not the retry budget) decides when it is lost.
    let alive = false;
    try {
      for (let attempt = 0; ; attempt++) {
        tracker.restart();
        const attemptAbort = new AbortController();
        const iterator = transport
          .send(params, {
            stream: params.stream === true,
            signal: AbortSignal.any([signal, attemptAbort.signal]),
          })
          [Symbol.asyncIterator]();
        try {
          for (;;) {
            const next = await nextOrAbort(iterator, signal);
            if (next.done) throw new LocalError('STREAM_CLOSED', 'transport ended before a result');
            const event = next.value;
            if (event.kind === 'error') throw AcmpError.fromObject(event.error);
            if (event.kind === 'result') {
              yield { kind: 'result', result: event.result, output: tracker.complete(params, event.result) };
              return;
            }
            watchdog.kick();
            alive = true;
            if (event.kind === 'heartbeat') yield event;
            else if (params.stream !== true)
              throw new AcmpError(ACMP_CODE.internal, { task_id: taskId, reason: 'unrequested_chunk' });
            else if (tracker.accept(event.params)) yield event;
          }
        } catch (error) {
          // A refusal (bad credentials, a request the peer rejects) fails at once: retrying cannot help.
          if (signal.aborted || error instanceof AcmpError || isLocalError(error, 'REFUSED')) throw error;
          // A transport failure (§3.1.1): retry with the same task_id; the provider replays or joins. A
          // reconnection is no sign of life, so a provider killed mid-task fails by liveness (-33003, §3.6).
          if (attempt >= retries && !(alive && livenessMs !== undefined)) {
            throw new AcmpError(
              ACMP_CODE.internal,
              { task_id: taskId, reason: 'transport_failed' },
              { message: 'Transport failed', cause: error },
            );
          }
          logger.info('acmp.buyer_retry', { task_id: taskId, attempt: attempt + 1, ...errorFields(error) });
          await sleep(retryDelayMs * (attempt + 1), { signal });
        } finally {
          // Detach from this attempt (also when the consumer stops early); never cancels the work.
          attemptAbort.abort();
          void iterator.return?.();
        }
      }
    } catch (error) {
      if (watchdog.signal.aborted) {
        await sendCancel(taskId, 'timeout');
        throw watchdog.signal.reason;
      }
      if (callOptions?.signal?.aborted) {
        await sendCancel(taskId, 'aborted by buyer');
        throw callOptions.signal.reason;
      }
      if (error instanceof AcmpError && isRunningViolation(error))
        await sendCancel(taskId, 'protocol violation');
      throw error;
    } finally {
      watchdog.dispose();
    }
  }

  return {
    stream,
    async invoke(input, callOptions) {
      for await (const event of stream(input, callOptions)) {
        if (event.kind === 'result') return { ...event.result, output: event.output };
      }
      throw new LocalError('INVALID_STATE', 'stream ended without a result');
    },
  };
}

/** Chunk violations happen while the task still runs, so the buyer cancels it. */
function isRunningViolation(error: AcmpError): boolean {
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' && (reason.startsWith('chunk_') || reason === 'unrequested_chunk');
}

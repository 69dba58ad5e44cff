import { sleepOn, systemClock, type TimerClock } from '../../shared/clock.js';
import { isLocalError, LocalError } from '../../shared/errors.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { isJsonObject } from '../../shared/json.js';
import { errorFields, silentLogger, type Logger } from '../../shared/logger.js';
import { BuyerCall, prepareInvokeParams, type BuyerEvent, type InvokeInput } from './buyer-call.js';
import { ACMP_METHOD } from '../wire/constants.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { CapabilityObjectSchema, type AcmpEvent, type CapabilityObject } from '../wire/messages.js';
import { type AcmpResult, type CancelParams, type InvokeParams } from '../wire/task-messages.js';
import { SignatureCheck, type SignaturePolicy } from './signature-policy.js';
import { nextOrAbort } from './watchdog.js';
import type { IdentityChallengePolicy } from './identity-gate.js';

export type { BuyerEvent, InvokeInput } from './buyer-call.js';

/** A provider message as the buyer receives it (the provider's {@link AcmpEvent}s, decoded by a binding). */
export type AcmpInbound = AcmpEvent;

/** What a binding (A2A later; loopback in tests) gives the buyer core. */
export interface AcmpBuyerTransport {
  /** Sends `acmp/invoke` and yields the provider's messages; ends after the result or error. */
  send(params: InvokeParams, options: { stream: boolean; signal: AbortSignal }): AsyncIterable<AcmpInbound>;
  /** Sends `acmp/cancel` (a notification: resolves once sent). */
  cancel(params: CancelParams, options?: { signal?: AbortSignal }): Promise<void>;
}

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
  /** The clock the call's deadline, liveness window and retry back-off run on (default the system's). */
  clock?: TimerClock;
  logger?: Logger;
  /** Retries after a transport failure, with the same task_id (default 2; §3.1.1 makes it safe). */
  retries?: number;
  /** Base back-off between retries, multiplied by the attempt number (default 200 ms). */
  retryDelayMs?: number;
  /**
   * The liveness window for the provider's advertised `heartbeat_interval_ms`: Layer 1 §3.6 leaves it to
   * the buyer and recommends 3 × the interval (the default). A longer one suits a jittery network.
   */
  livenessWindowMs?: (heartbeatIntervalMs: number) => number;
  /**
   * Layer 7 §4.1: results (proof included) must be signed by the provider's DID (by default the
   * capability object's `did`, required when there is one). A result that fails is refused with -36003
   * and never returned, so nothing is paid for it.
   */
  signatures?: SignaturePolicy;
}

/** How a buyer retries, watches and checks its calls, whatever the transport (A2A, MCP). */
export type BuyerCallPolicy = Pick<
  AcmpBuyerOptions,
  'retries' | 'retryDelayMs' | 'livenessWindowMs' | 'signatures'
> &
  IdentityChallengePolicy;

const CANCEL_WAIT_MS = 2000;

/**
 * Creates the buyer core. It never relies on an unadvertised feature (Layer 1 §1): `stream: true`
 * without `output_streaming`, or `input_stream`, fails locally with -33007 before anything is sent, and
 * a liveness window is kept only when `heartbeat_interval_ms` is advertised.
 * @throws LocalError `CONFIG_INVALID` for a malformed capability object, or signatures required of a
 *   provider whose DID is not known.
 */
export function createAcmpBuyerCore(options: AcmpBuyerOptions): AcmpBuyerCore {
  const parsed = CapabilityObjectSchema.safeParse(options.capabilityObject);
  if (!parsed.success) throw new LocalError('CONFIG_INVALID', 'capability object is malformed');
  return new TransportBuyerCore(parsed.data, options);
}

/** The buyer core over one {@link AcmpBuyerTransport}: each call is a {@link BuyerCall} tried until it ends. */
class TransportBuyerCore implements AcmpBuyerCore {
  private readonly transport: AcmpBuyerTransport;
  private readonly ids: IdSource;
  private readonly logger: Logger;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly clock: TimerClock;
  private readonly livenessMs: number | undefined;
  private readonly signatures: SignatureCheck;

  constructor(
    private readonly capability: CapabilityObject,
    options: AcmpBuyerOptions,
  ) {
    this.signatures = new SignatureCheck(options.signatures ?? {}, capability);
    this.transport = options.transport;
    this.ids = options.ids ?? systemIds;
    this.logger = options.logger ?? silentLogger;
    this.retries = options.retries ?? 2;
    this.retryDelayMs = options.retryDelayMs ?? 200;
    this.clock = options.clock ?? systemClock;
    this.livenessMs = livenessWindow(capability, options.livenessWindowMs);
  }

  async invoke(input: InvokeInput, callOptions?: { signal?: AbortSignal }): Promise<AcmpResult> {
    for await (const event of this.stream(input, callOptions)) {
      if (event.kind === 'result') return { ...event.result, output: event.output };
    }
    throw new LocalError('INVALID_STATE', 'stream ended without a result');
  }

  async *stream(input: InvokeInput, callOptions?: { signal?: AbortSignal }): AsyncGenerator<BuyerEvent> {
    callOptions?.signal?.throwIfAborted();
    const params = prepareInvokeParams(this.capability, input, this.ids);
    const call = new BuyerCall(params, {
      livenessMs: this.livenessMs,
      signal: callOptions?.signal,
      clock: this.clock,
    });
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          yield* this.attempt(call);
          return;
        } catch (error) {
          await this.beforeRetry(call, error, attempt);
        }
      }
    } catch (error) {
      await this.abandon(call, error);
    } finally {
      call.dispose();
    }
  }

  /** One transport attempt: yields the call's events until its result (§3.1.1: the same task_id each time). */
  private async *attempt(call: BuyerCall): AsyncGenerator<BuyerEvent> {
    call.tracker.restart();
    const attemptAbort = new AbortController();
    const iterator = this.transport
      .send(call.params, {
        stream: call.params.stream === true,
        signal: AbortSignal.any([call.signal, attemptAbort.signal]),
      })
      [Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await nextOrAbort(iterator, call.signal);
        if (next.done) throw new LocalError('STREAM_CLOSED', 'transport ended before a result');
        const event = call.receive(next.value);
        // Layer 7 §4.1: the result as received, proof included, is the provider DID's (else -36003).
        if (event?.kind === 'result') await this.signatures.check(event.result, { signal: call.signal });
        yield* call.deliver(event);
        if (event?.kind === 'result') return;
      }
    } finally {
      // Detach from this attempt (also when the consumer stops early); never cancels the work.
      attemptAbort.abort();
      void iterator.return?.();
    }
  }

  /**
   * Decides whether a failed attempt is retried (after a back-off) or ends the call (rethrows).
   * @throws the attempt's error when retrying cannot help; AcmpError -33099 `transport_failed` when the
   *   retries are spent.
   */
  private async beforeRetry(call: BuyerCall, error: unknown, attempt: number): Promise<void> {
    // A refusal (bad credentials, a request the peer rejects) fails at once: retrying cannot help.
    if (call.signal.aborted || error instanceof AcmpError || isLocalError(error, 'REFUSED')) throw error;
    // A transport failure (§3.1.1): retry with the same task_id; the provider replays or joins. A
    // reconnection is no sign of life, so a provider killed mid-task fails by liveness (-33003, §3.6).
    if (attempt >= this.retries && !call.livenessDecides) {
      throw new AcmpError(
        ACMP_CODE.internal,
        { task_id: call.taskId, reason: 'transport_failed' },
        { message: 'Transport failed', cause: error },
      );
    }
    this.logger.info('acmp.buyer_retry', {
      task_id: call.taskId,
      attempt: attempt + 1,
      ...errorFields(error),
    });
    await sleepOn(this.clock, this.retryDelayMs * (attempt + 1), call.signal);
  }

  /**
   * Ends a failed call: cancels the provider's work when the buyer gives up on a running task (deadline,
   * liveness, the caller's abort, a chunk violation), then throws why.
   */
  private async abandon(call: BuyerCall, error: unknown): Promise<never> {
    if (call.watchdog.signal.aborted) {
      await this.sendCancel(call.taskId, 'timeout');
      throw call.watchdog.signal.reason;
    }
    if (call.callerSignal?.aborted) {
      await this.sendCancel(call.taskId, 'aborted by buyer');
      throw call.callerSignal.reason;
    }
    if (error instanceof AcmpError && isRunningViolation(error))
      await this.sendCancel(call.taskId, 'protocol violation');
    throw error;
  }

  private async sendCancel(taskId: string, reason: string): Promise<void> {
    if (!this.capability.accepts.includes(ACMP_METHOD.cancel)) return;
    try {
      await this.transport.cancel(
        { task_id: taskId, reason },
        { signal: AbortSignal.timeout(CANCEL_WAIT_MS) },
      );
    } catch (error) {
      this.logger.warn('acmp.buyer_cancel_failed', { task_id: taskId, ...errorFields(error) });
    }
  }
}

/**
 * The liveness window, only when `heartbeat_interval_ms` is advertised (Layer 1 §1: nothing unadvertised).
 * @throws LocalError `CONFIG_INVALID` when the buyer's choice is not a positive number of milliseconds.
 */
function livenessWindow(
  capability: CapabilityObject,
  choose: ((heartbeatIntervalMs: number) => number) | undefined,
): number | undefined {
  const heartbeatMs = capability.features.heartbeat_interval_ms;
  if (heartbeatMs === undefined) return undefined;
  // Layer 1 §3.6: "its liveness window (recommended: 3 × heartbeat_interval_ms)".
  const windowMs = choose ? choose(heartbeatMs) : 3 * heartbeatMs;
  if (!Number.isFinite(windowMs) || windowMs <= 0)
    throw new LocalError('CONFIG_INVALID', 'livenessWindowMs must give a positive number of milliseconds');
  return windowMs;
}

/** Chunk violations happen while the task still runs, so the buyer cancels it. */
function isRunningViolation(error: AcmpError): boolean {
  const reason = isJsonObject(error.data) ? error.data.reason : undefined;
  return typeof reason === 'string' && (reason.startsWith('chunk_') || reason === 'unrequested_chunk');
}

import type { TimerClock } from '../../shared/clock.js';
import type { IdSource } from '../../shared/ids.js';
import { ChunkTracker } from './buyer-checks.js';
import { ACMP_METHOD } from '../wire/constants.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { type AcmpEvent, type CapabilityObject } from '../wire/messages.js';
import {
  InvokeParamsSchema,
  resolveInvoke,
  type AcmpResult,
  type HeartbeatParams,
  type InvokeParams,
  type Payload,
  type StreamChunkParams,
} from '../wire/task-messages.js';
import { Watchdog } from './watchdog.js';

/** Invoke params with an optional task_id (the buyer core generates a globally unique one, §3.1). */
export type InvokeInput = Omit<InvokeParams, 'task_id'> & { task_id?: string };

/** What {@link AcmpBuyerCore.stream} yields: notifications, then the result with the full output. */
export type BuyerEvent =
  | { kind: 'chunk'; params: StreamChunkParams }
  | { kind: 'heartbeat'; params: HeartbeatParams }
  | { kind: 'result'; result: AcmpResult; output: Payload };

/**
 * The params of one call: `input` with a fresh task_id when it has none, checked against the schema and
 * against what the provider advertised. Layer 1 §1: the buyer never relies on an unadvertised feature.
 * @throws AcmpError -32602 for params the schema refuses; -33007 (`data.feature`) for `acmp/invoke` not
 *   accepted, `stream: true` without `output_streaming`, or `input_stream` (never sent, A2A binding §3.3).
 */
export function prepareInvokeParams(
  capability: CapabilityObject,
  input: InvokeInput,
  ids: IdSource,
): InvokeParams {
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
}

/** What a {@link BuyerCall} watches besides its params. */
export interface BuyerCallOptions {
  /** The liveness window (Layer 1 §3.6), when the provider advertises heartbeats. */
  readonly livenessMs: number | undefined;
  /** The caller's signal. */
  readonly signal?: AbortSignal | undefined;
  /** The clock of the deadline and the liveness window (default the system's). */
  readonly clock?: TimerClock | undefined;
}

/**
 * One buyer call across its transport attempts: its deadline and liveness watchdog, the chunk order it
 * has seen, and whether the provider showed life. {@link receive} reads each provider message.
 */
export class BuyerCall {
  readonly params: InvokeParams;
  readonly watchdog: Watchdog;
  readonly tracker: ChunkTracker;
  /** Aborts on the deadline, on liveness loss and with the caller's signal. */
  readonly signal: AbortSignal;
  /** The caller's own signal, if any. */
  readonly callerSignal: AbortSignal | undefined;
  private readonly livenessMs: number | undefined;
  private alive = false;

  constructor(params: InvokeParams, options: BuyerCallOptions) {
    this.params = params;
    this.livenessMs = options.livenessMs;
    this.callerSignal = options.signal;
    this.watchdog = new Watchdog(params.task_id, {
      deadlineMs: resolveInvoke(params).timeoutMs,
      livenessMs: options.livenessMs,
      clock: options.clock,
    });
    this.signal = AbortSignal.any([this.watchdog.signal, ...(options.signal ? [options.signal] : [])]);
    this.tracker = new ChunkTracker(params.task_id);
  }

  get taskId(): string {
    return this.params.task_id;
  }

  /** Once the provider showed life, the liveness window (not the retry budget) decides when it is lost. */
  get livenessDecides(): boolean {
    return this.alive && this.livenessMs !== undefined;
  }

  /**
   * Reads one provider message: what to yield for it, if anything (a replayed chunk yields nothing).
   * A chunk or heartbeat is a sign of life (§3.6): the provider's silence ended, so the liveness window
   * stops until {@link deliver} starts it again.
   * @throws AcmpError the provider's error; -33099 `unrequested_chunk` or a chunk-order violation.
   */
  receive(event: AcmpEvent): BuyerEvent | undefined {
    if (event.kind === 'error') throw AcmpError.fromObject(event.error);
    if (event.kind === 'result')
      return {
        kind: 'result',
        result: event.result,
        output: this.tracker.complete(this.params, event.result),
      };
    this.watchdog.pause();
    this.alive = true;
    if (event.kind === 'heartbeat') return event;
    if (this.params.stream !== true)
      throw new AcmpError(ACMP_CODE.internal, { task_id: this.taskId, reason: 'unrequested_chunk' });
    return this.tracker.accept(event.params) ? event : undefined;
  }

  /**
   * Yields what {@link receive} made of a message (if anything) with the liveness window stopped: the
   * consumer's time with an event is not the provider's silence (§3.6; docs/acmp-core.md "Buyer
   * liveness"). The window starts again when the consumer asks for the next event.
   */
  *deliver(event: BuyerEvent | undefined): Generator<BuyerEvent> {
    this.watchdog.pause();
    try {
      if (event) yield event;
    } finally {
      this.watchdog.listen();
    }
  }

  dispose(): void {
    this.watchdog.dispose();
  }
}

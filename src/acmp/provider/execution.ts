import type { Metrics } from '../../shared/metrics.js';
import { LocalError } from '../../shared/errors.js';
import { sleepOn, type TimerClock, type TimerHandle } from '../../shared/clock.js';
import { errorFields, type Logger } from '../../shared/logger.js';
import { TRACE_ATTR, failSpan, startSpan, withSpan } from '../../shared/tracing.js';
import type { Span } from '@opentelemetry/api';
import { ACMP_CODE, AcmpError, toAcmpErrorObject } from '../wire/errors.js';
import { resolveInvoke, type AcmpResult, type InvokeParams, type Payload } from '../wire/task-messages.js';
import { assembleChunks, createResultHashProof } from '../wire/proof.js';
import { estimateTokens, type AcceptedTask } from './provider-checks.js';
import type { HandlerContext } from './provider-types.js';
import { signResult, type ResultSigning } from './result-signing.js';
import {
  isFinished,
  unrecordedEnd,
  type AcmpTaskStore,
  type FinishedTaskRecord,
  type TaskEnd,
  type TaskOutcome,
} from './task-store.js';
import type { Delivery } from './delivery.js';
import { checkPayload } from './payload-check.js';
import type { TaskFeed } from './task-feed.js';

/** Everything a local execution needs. */
export interface ExecutionDeps {
  readonly params: InvokeParams;
  readonly accepted: AcceptedTask;
  readonly store: AcmpTaskStore;
  readonly hostId: string;
  readonly providerId: string | undefined;
  readonly heartbeatIntervalMs: number | null;
  readonly clock: TimerClock;
  readonly logger: Logger;
  /** Aborts while the outcome cannot be stored: the provider is closing. */
  readonly closing: AbortSignal;
  /** Signs the result before it is stored (Layer 7 §4.1); results stay unsigned without it. */
  readonly signing?: ResultSigning | undefined;
  /** Counts the run and its end (docs/operations.md "Metrics"). */
  readonly metrics: Metrics;
  /** Called once the outcome is stored and delivered. */
  readonly onDone: () => void;
}

/** Abort reason for the signal of a handler whose task ended with a result (shared: nothing reads it). */
const SETTLED = new LocalError('ABORTED', 'task settled');
/** Back-off between attempts to store an outcome while the database is unreachable. */
const FINISH_RETRY_MS = [50, 200, 1_000, 2_000];
/** The pause between later attempts, once {@link FINISH_RETRY_MS} is used up. */
const FINISH_RETRY_MAX_MS = 5_000;

/**
 * One run of a capability handler on the host that claimed the task, shared by every invoke of the task
 * on this host (Layer 1 §3.1.1: a duplicate joins, it never runs twice). It owns the handler's
 * AbortController and the task's timers — the `timeout_ms` deadline (§3.1) and automatic heartbeats
 * (§3.6) — and writes the record: chunks as they come (batched per event-loop turn), then the outcome with
 * a compare-and-set. A cancel or a reaper on another host finishes the record first; the execution then
 * stops the handler and delivers what the record says.
 */
export class LocalExecution implements TaskFeed {
  private readonly chunks: Payload[] = [];
  private readonly deliveries = new Set<Delivery>();
  private readonly controller = new AbortController();
  private readonly timers: TimerHandle[] = [];
  private stored = 0;
  private flushing: Promise<void> = Promise.resolve();
  private flushQueued = false;
  private streamedByHandler = false;
  private settling: Promise<FinishedTaskRecord> | undefined;
  private final: FinishedTaskRecord | undefined;
  /** When the handler started (`performance.now()`), for the invoke latency. */
  private startedAt = 0;
  private unwatch: (() => void) | undefined;
  private markDone: () => void = () => {};
  /** The run's span (`acmp.execute`), from start to the stored outcome. */
  private span: Span | undefined;
  /** Resolves once the outcome is stored and delivered. */
  readonly done = new Promise<void>((resolve) => (this.markDone = resolve));

  constructor(private readonly deps: ExecutionDeps) {}

  get taskId(): string {
    return this.deps.params.task_id;
  }

  /** The final record, once the task has ended. */
  get settled(): Promise<FinishedTaskRecord> | undefined {
    return this.settling;
  }

  /**
   * Starts the handler and the timers inside the run's span (docs/operations.md "Tracing"), a child of
   * the call that started it: the handler's outbound calls and the outcome's commit descend from it.
   */
  start(): this {
    const { params } = this.deps;
    const span = startSpan('acmp.execute', {
      [TRACE_ATTR.acmpCapability]: params.capability,
      [TRACE_ATTR.acmpTaskId]: this.taskId,
    });
    this.span = span;
    return withSpan(span, () => this.startInSpan());
  }

  private startInSpan(): this {
    const { params, heartbeatIntervalMs, store, clock } = this.deps;
    const timeoutMs = resolveInvoke(params).timeoutMs;
    // Layer 1 §3.1: the provider MUST stop a task at its `timeout_ms` (the clock clamps what a timer holds).
    this.timers.push(
      clock.setTimeout(() => void this.stop(ACMP_CODE.timeout, { timeout_ms: timeoutMs }), timeoutMs),
    );
    if (heartbeatIntervalMs !== null)
      this.timers.push(clock.setInterval(() => this.broadcastHeartbeat(), heartbeatIntervalMs));
    for (const t of this.timers) t.background();
    this.startedAt = performance.now();
    this.deps.metrics.acmpRunning(1);
    // A cancel or a reaper elsewhere finishes the record: stop the work and deliver what it says.
    this.unwatch = store.watch(this.taskId, (signal) => {
      if ((signal.kind === 'finished' || signal.kind === 'resync') && !this.settling) void this.adopt();
    });
    void this.run().then(
      (outcome) => this.settle(outcome, 'completed'),
      (error: unknown) => this.settle(this.failure(error), 'completed'),
    );
    return this;
  }

  attach(delivery: Delivery): () => void {
    for (const chunk of this.chunks) delivery.chunk(chunk);
    if (this.final) {
      delivery.finish(this.final);
      return () => {};
    }
    this.deliveries.add(delivery);
    return () => this.deliveries.delete(delivery);
  }

  /** Layer 1 §3.7: abort the handler; the task ends with -33004 unless it already ended. */
  cancel(end: TaskEnd): Promise<FinishedTaskRecord> {
    return this.settle(errorOutcome(ACMP_CODE.cancelled, this.taskId), end);
  }

  /** Stops the task with an error outcome (deadline, shutdown); resolves once it is stored. */
  stop(code: number, data: Record<string, unknown> = {}): Promise<FinishedTaskRecord> {
    return this.settle(errorOutcome(code, this.taskId, data), 'completed');
  }

  /** The record was finished elsewhere (a cancel from another host, the reaper): deliver the stored end. */
  async adopt(): Promise<void> {
    try {
      const record = await this.deps.store.get(this.taskId);
      if (record && isFinished(record) && !this.settling) await this.settle(record.outcome, record.end);
    } catch (error) {
      this.deps.logger.warn('acmp.adopt_failed', { task_id: this.taskId, ...errorFields(error) });
    }
  }

  private async run(): Promise<TaskOutcome> {
    const { accepted } = this.deps;
    const { input } = accepted;
    const ctx: HandlerContext = {
      taskId: this.taskId,
      signal: this.controller.signal,
      heartbeat: (progress, detail) => this.broadcastHeartbeat(progress, detail),
    };
    const produced = accepted.capability.handler(input, ctx);
    let output: Payload;
    if (isAsyncIterable(produced)) {
      this.streamedByHandler = true;
      for await (const chunk of produced) {
        if (this.settling) break;
        this.broadcastChunk(checkPayload(chunk));
      }
      output = assembleChunks(this.chunks);
    } else {
      output = checkPayload(await produced);
      if (!this.settling) for (const d of this.deliveries) d.chunk(output);
      if (!this.settling) this.chunks.push(output);
    }
    const result = this.buildResult(input, output);
    const { signing } = this.deps;
    return { kind: 'result', result: signing ? await signResult(result, signing) : result };
  }

  private buildResult(input: Payload, output: Payload): AcmpResult {
    const { params, accepted, providerId } = this.deps;
    const tokens = accepted.capability.tokens
      ? accepted.capability.tokens(input, output)
      : estimateTokens(input, output);
    // Layer 1 §3.2: cost_cu MUST NOT exceed max_price_cu.
    const cost =
      params.max_price_cu === undefined ? accepted.price : Math.min(accepted.price, params.max_price_cu);
    const result: AcmpResult = {
      task_id: this.taskId,
      output,
      output_streamed: false,
      tokens_used: Math.max(0, Math.round(tokens)),
      cost_cu: cost,
    };
    // Layer 3 §3.1: result-hash over the (assembled) output, input_hash over the invoke input.
    if (params.proof_method !== undefined) result.proof = createResultHashProof(output, input);
    if (providerId !== undefined) result.provider_id = providerId;
    return result;
  }

  private failure(error: unknown): TaskOutcome {
    if (!(error instanceof AcmpError)) {
      this.deps.logger.error('acmp.handler_failed', {
        task_id: this.taskId,
        capability: this.deps.params.capability,
        ...errorFields(error),
      });
    }
    return { kind: 'error', error: toAcmpErrorObject(error, { task_id: this.taskId }) };
  }

  /** The one way a task ends: abort the handler, store the outcome (compare-and-set), then deliver. */
  private settle(outcome: TaskOutcome, end: TaskEnd): Promise<FinishedTaskRecord> {
    this.settling ??= this.finishWith(outcome, end);
    return this.settling;
  }

  private async finishWith(outcome: TaskOutcome, end: TaskEnd): Promise<FinishedTaskRecord> {
    for (const t of this.timers) t.cancel();
    // The handler's signal aborts with the reason the task ended; a finished handler needs no fresh error.
    this.controller.abort(outcome.kind === 'error' ? new AcmpError(outcome.error.code) : SETTLED);
    if (outcome.kind === 'result' && this.streamedByHandler) await this.flushChunks();
    const final = await this.store(outcome, end);
    this.final = final;
    this.unwatch?.();
    for (const d of this.deliveries) d.finish(final);
    this.deliveries.clear();
    this.count(final);
    this.endSpan(final);
    this.deps.onDone();
    this.markDone();
    return final;
  }

  /** The run's end, in the host's metrics: its outcome, the CU its result billed, how long it ran. */
  private count(final: FinishedTaskRecord): void {
    const { metrics, params } = this.deps;
    const outcome = final.outcome;
    metrics.acmpRunning(-1);
    metrics.acmpInvoke({
      capability: params.capability,
      seconds: (performance.now() - this.startedAt) / 1000,
      ...(outcome.kind === 'result'
        ? { outcome: 'result', costCu: outcome.result.cost_cu }
        : { outcome: 'error', code: outcome.error.code }),
    });
  }

  /** Ends the run's span with the stored outcome: ACMP code and status ERROR for an error. */
  private endSpan(final: FinishedTaskRecord): void {
    const span = this.span;
    if (span === undefined) return;
    const outcome = final.outcome;
    span.setAttribute(TRACE_ATTR.acmpOutcome, outcome.kind);
    if (outcome.kind === 'error') failSpan(span, { [TRACE_ATTR.acmpErrorCode]: outcome.error.code });
    span.end();
  }

  /** Writes the outcome; the record as stored wins (another host may have finished it first). */
  private async store(outcome: TaskOutcome, end: TaskEnd): Promise<FinishedTaskRecord> {
    const { store, clock, hostId, logger, closing } = this.deps;
    for (let attempt = 0; ; attempt++) {
      try {
        const record = (await store.finish(this.taskId, { outcome, end, at: clock.now(), hostId }))?.record;
        if (record && isFinished(record)) return record;
        throw new LocalError('INVALID_STATE', 'the task record is missing');
      } catch (error) {
        logger.error('acmp.store_finish_failed', { task_id: this.taskId, attempt, ...errorFields(error) });
        const wait = FINISH_RETRY_MS[attempt] ?? FINISH_RETRY_MAX_MS;
        const waited = await sleepOn(clock, wait, closing).then(
          () => true,
          () => false,
        );
        if (!waited) {
          return unrecordedEnd(this.taskId, errorOutcome(ACMP_CODE.internal, this.taskId), clock.now());
        }
      }
    }
  }

  private broadcastChunk(chunk: Payload): void {
    this.chunks.push(chunk);
    this.deps.metrics.acmpEvent('stream_chunk');
    for (const d of this.deliveries) d.chunk(chunk);
    if (this.flushQueued) return;
    this.flushQueued = true;
    // Chunks produced within one turn of the event loop are stored with one statement.
    setImmediate(() => {
      this.flushQueued = false;
      void this.flushChunks();
    });
  }

  private flushChunks(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.stored >= this.chunks.length) return;
      const from = this.stored;
      const batch = this.chunks.slice(from);
      try {
        if (
          await this.deps.store.appendChunks(this.taskId, { hostId: this.deps.hostId, from, chunks: batch })
        )
          this.stored = from + batch.length;
        else if (!this.settling) void this.adopt();
      } catch (error) {
        this.deps.logger.warn('acmp.store_chunks_failed', { task_id: this.taskId, ...errorFields(error) });
      }
    });
    return this.flushing;
  }

  private broadcastHeartbeat(progress?: number, detail?: string): void {
    if (this.settling || this.deps.heartbeatIntervalMs === null) return;
    const p =
      progress === undefined || !Number.isFinite(progress) ? undefined : Math.min(1, Math.max(0, progress));
    const d = typeof detail === 'string' ? detail : undefined;
    this.deps.metrics.acmpEvent('heartbeat');
    for (const delivery of this.deliveries) delivery.heartbeat(p, d);
    // Followers on other hosts get it through the store's signals.
    this.deps.store.heartbeat(this.taskId, p, d);
  }
}

function errorOutcome(code: number, taskId: string, data: Record<string, unknown> = {}): TaskOutcome {
  return { kind: 'error', error: new AcmpError(code, { task_id: taskId, ...data }).toObject() };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

import { LocalError } from '../shared/errors.js';
import type { Clock } from '../shared/clock.js';
import { errorFields, type Logger } from '../shared/logger.js';
import { MAX_TIMER_MS } from './constants.js';
import { ACMP_CODE, AcmpError, toAcmpErrorObject } from './errors.js';
import { PayloadSchema, resolveInvoke, type AcmpResult, type InvokeParams, type Payload } from './messages.js';
import { assembleChunks, createResultHashProof } from './proof.js';
import { estimateTokens, type AcceptedTask } from './provider-checks.js';
import type { HandlerContext } from './provider-types.js';
import type { AcmpTaskStore, TaskOutcome } from './task-store.js';
import type { Delivery } from './delivery.js';
import type { TaskFeed } from './task-feed.js';

/** Everything a local execution needs. */
export interface ExecutionDeps {
  readonly params: InvokeParams;
  readonly accepted: AcceptedTask;
  readonly paramsHash: string;
  readonly store: AcmpTaskStore;
  readonly ownerId: string;
  readonly providerId: string | undefined;
  readonly heartbeatIntervalMs: number | null;
  /** How often `alive_at` is refreshed and `cancel_requested` polled. */
  readonly aliveIntervalMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Called once the outcome is stored and delivered. */
  readonly onDone: () => void;
}

/**
 * One run of a capability handler on this process, shared by every invoke with its task_id
 * (Layer 1 §3.1.1: a duplicate joins, it never runs twice). It owns the handler's AbortController and the
 * task's timers: the `timeout_ms` deadline (§3.1, enforced on the provider side too), automatic heartbeats
 * (§3.6) and the `alive_at` refresh that other hosts judge liveness by.
 */
/** Abort reason for the signal of a handler whose task ended with a result (shared: nothing reads it). */
const SETTLED = new LocalError('ABORTED', 'task settled');

export class LocalExecution implements TaskFeed {
  readonly paramsHash: string;
  private readonly chunks: Payload[] = [];
  private readonly deliveries = new Set<Delivery>();
  private readonly controller = new AbortController();
  private readonly timers: NodeJS.Timeout[] = [];
  private streamedByHandler = false;
  private settling: Promise<void> | undefined;
  private outcome: TaskOutcome | undefined;

  constructor(private readonly deps: ExecutionDeps) {
    this.paramsHash = deps.paramsHash;
  }

  get taskId(): string {
    return this.deps.params.task_id;
  }

  /** Starts the handler and the timers. */
  start(): this {
    const { params, heartbeatIntervalMs, aliveIntervalMs } = this.deps;
    const timeoutMs = resolveInvoke(params).timeoutMs;
    this.timers.push(setTimeout(() => void this.stop(ACMP_CODE.timeout, { timeout_ms: timeoutMs }), Math.min(timeoutMs, MAX_TIMER_MS)));
    if (heartbeatIntervalMs !== null) {
      this.timers.push(setInterval(() => this.broadcastHeartbeat(), heartbeatIntervalMs));
    }
    this.timers.push(setInterval(() => void this.refreshAlive(), aliveIntervalMs));
    for (const t of this.timers) t.unref();
    void this.run().then(
      (outcome) => this.settle(outcome),
      (error: unknown) => this.settle(this.failure(error)),
    );
    return this;
  }

  attach(delivery: Delivery): () => void {
    for (const chunk of this.chunks) delivery.chunk(chunk);
    if (this.outcome) {
      delivery.finish(this.outcome);
      return () => {};
    }
    this.deliveries.add(delivery);
    return () => this.deliveries.delete(delivery);
  }

  /** `acmp/cancel` (Layer 1 §3.7): abort the handler, answer the invoke with -33004. */
  cancel(): void {
    void this.stop(ACMP_CODE.cancelled);
  }

  /** Stops the task with an error outcome (deadline, cancel, shutdown); resolves once it is stored. */
  stop(code: number, data: Record<string, unknown> = {}): Promise<void> {
    return this.settle({ kind: 'error', error: new AcmpError(code, { task_id: this.taskId, ...data }).toObject() });
  }

  private async run(): Promise<TaskOutcome> {
    const { params, accepted } = this.deps;
    const input = params.input!;
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
      if (!this.settling) this.broadcastChunk(output);
    }
    return { kind: 'result', result: this.buildResult(input, output), ...(this.streamedByHandler ? { chunks: this.chunks } : {}) };
  }

  private buildResult(input: Payload, output: Payload): AcmpResult {
    const { params, accepted, providerId } = this.deps;
    const tokens = accepted.capability.tokens ? accepted.capability.tokens(input, output) : estimateTokens(input, output);
    // Layer 1 §3.2: cost_cu MUST NOT exceed max_price_cu.
    const cost = params.max_price_cu === undefined ? accepted.price : Math.min(accepted.price, params.max_price_cu);
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
      this.deps.logger.error('acmp.handler_failed', { task_id: this.taskId, capability: this.deps.params.capability, ...errorFields(error) });
    }
    return { kind: 'error', error: toAcmpErrorObject(error, { task_id: this.taskId }) };
  }

  /** The one way a task ends: abort the handler, store the outcome (compare-and-set), then deliver. */
  private settle(outcome: TaskOutcome): Promise<void> {
    this.settling ??= this.finishWith(outcome);
    return this.settling;
  }

  private async finishWith(outcome: TaskOutcome): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    // The handler's signal aborts with the reason the task ended; a finished handler needs no fresh error.
    this.controller.abort(outcome.kind === 'error' ? new AcmpError(outcome.error.code) : SETTLED);
    const { store, clock, ownerId } = this.deps;
    let final = outcome;
    try {
      const won = await store.finish(this.taskId, outcome, clock.now(), { ownerId });
      // Another host declared this task dead first: the stored outcome is the truth.
      if (!won) final = (await store.get(this.taskId))?.outcome ?? outcome;
    } catch (error) {
      this.deps.logger.error('acmp.store_finish_failed', { task_id: this.taskId, ...errorFields(error) });
    }
    this.outcome = final;
    for (const d of this.deliveries) d.finish(final);
    this.deliveries.clear();
    this.deps.onDone();
  }

  private broadcastChunk(chunk: Payload): void {
    this.chunks.push(chunk);
    for (const d of this.deliveries) d.chunk(chunk);
  }

  private broadcastHeartbeat(progress?: number, detail?: string): void {
    if (this.settling || this.deps.heartbeatIntervalMs === null) return;
    const p = progress === undefined || !Number.isFinite(progress) ? undefined : Math.min(1, Math.max(0, progress));
    const d = typeof detail === 'string' ? detail : undefined;
    for (const delivery of this.deliveries) delivery.heartbeat(p, d);
  }

  private async refreshAlive(): Promise<void> {
    if (this.settling) return;
    const { store, ownerId, clock, logger } = this.deps;
    try {
      const state = await store.touch(this.taskId, ownerId, clock.now());
      if (this.settling) return;
      if (state === undefined) {
        const stored = (await store.get(this.taskId))?.outcome;
        if (stored) await this.settle(stored);
      } else if (state.cancelRequested) this.cancel();
    } catch (error) {
      logger.warn('acmp.store_touch_failed', { task_id: this.taskId, ...errorFields(error) });
    }
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** Handler output is checked like wire input: a bad payload is a provider bug (-33099). */
function checkPayload(value: unknown): Payload {
  const parsed = PayloadSchema.safeParse(value);
  if (!parsed.success) throw new TypeError('capability handler produced an invalid {type, data} payload');
  return parsed.data;
}

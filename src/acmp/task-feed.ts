import type { Clock } from '../shared/clock.js';
import { errorFields, type Logger } from '../shared/logger.js';
import { ACMP_CODE, AcmpError } from './errors.js';
import { replayChunks, type Delivery } from './delivery.js';
import type { AcmpTaskRecord, AcmpTaskStore, TaskOutcome } from './task-store.js';

/** A source of one task's events that invokes attach to: a local run, a stored outcome, another host's run. */
export interface TaskFeed {
  readonly paramsHash: string;
  /** Replays what happened so far, then delivers live; returns a detach function. */
  attach(delivery: Delivery): () => void;
}

/** Replays a finished task's stored outcome (Layer 1 §3.1.1: return the existing result). */
export class StoredFeed implements TaskFeed {
  constructor(
    readonly paramsHash: string,
    private readonly outcome: TaskOutcome,
  ) {}

  attach(delivery: Delivery): () => void {
    for (const chunk of replayChunks(this.outcome)) delivery.chunk(chunk);
    delivery.finish(this.outcome);
    return () => {};
  }
}

/** Options of {@link RemoteWatch}. */
export interface RemoteWatchDeps {
  readonly store: AcmpTaskStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly pollMs: number;
  /** How stale `alive_at` may get before the owner is presumed dead (3 × heartbeat interval, docs). */
  readonly livenessWindowMs: number;
  readonly heartbeats: boolean;
  readonly onDone: () => void;
}

/**
 * Waits on a task another process owns (the store says running; it is not in the local cache). Polls the
 * store until the task finishes; relays a heartbeat whenever the owner's `alive_at` moves, so a buyer's
 * liveness window does not fire on this connection. When `alive_at` is older than the liveness window or
 * the deadline passed, finishes the task as -33003 with a compare-and-set (Layer 1 §3.6) — if the owner
 * wins the race, its outcome stands.
 */
export class RemoteWatch implements TaskFeed {
  readonly paramsHash: string;
  private readonly deliveries = new Set<Delivery>();
  private outcome: TaskOutcome | undefined;
  private lastAliveAt: number;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly record: AcmpTaskRecord,
    private readonly deps: RemoteWatchDeps,
  ) {
    this.paramsHash = record.paramsHash;
    this.lastAliveAt = record.aliveAt;
  }

  start(): this {
    this.schedule();
    return this;
  }

  attach(delivery: Delivery): () => void {
    if (this.outcome) {
      for (const chunk of replayChunks(this.outcome)) delivery.chunk(chunk);
      delivery.finish(this.outcome);
      return () => {};
    }
    this.deliveries.add(delivery);
    return () => this.deliveries.delete(delivery);
  }

  /** Ends the wait without touching the store (provider close). */
  stop(): void {
    this.complete({ kind: 'error', error: new AcmpError(ACMP_CODE.internal, { task_id: this.record.taskId }).toObject() });
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.poll(), this.deps.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    const { store, clock, livenessWindowMs } = this.deps;
    const taskId = this.record.taskId;
    try {
      const current = await store.get(taskId);
      if (this.stopped) return;
      if (current?.outcome) return this.complete(current.outcome);
      if (current && current.aliveAt > this.lastAliveAt) {
        this.lastAliveAt = current.aliveAt;
        if (this.deps.heartbeats) for (const d of this.deliveries) d.heartbeat();
      }
      const now = clock.now();
      const aliveAt = current?.aliveAt ?? this.lastAliveAt;
      const expired = now >= (current?.deadlineAt ?? this.record.deadlineAt);
      if (expired || now - aliveAt > livenessWindowMs) {
        const reason = expired ? 'deadline' : 'owner_lost';
        const timeout = new AcmpError(ACMP_CODE.timeout, { task_id: taskId, reason }).toObject();
        await store.finish(taskId, { kind: 'error', error: timeout }, now, expired ? {} : { aliveBefore: now - livenessWindowMs });
        const settled = (await store.get(taskId))?.outcome;
        if (settled) return this.complete(settled);
      }
    } catch (error) {
      this.deps.logger.warn('acmp.store_poll_failed', { task_id: taskId, ...errorFields(error) });
    }
    this.schedule();
  }

  private complete(outcome: TaskOutcome): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.outcome = outcome;
    for (const d of this.deliveries) {
      for (const chunk of replayChunks(outcome)) d.chunk(chunk);
      d.finish(outcome);
    }
    this.deliveries.clear();
    this.deps.onDone();
  }
}

import { z } from 'zod';
import { AcmpErrorObjectSchema, AcmpResultSchema, PayloadSchema } from './messages.js';

/**
 * How a task ended, as stored. `result.output` is always present (the assembled output for a streamed
 * task); `chunks` holds the chunks a streaming handler produced, so a retry with `stream: true` replays
 * them, also after a restart (docs/acmp-core.md "Stored outcomes").
 */
export const TaskOutcomeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('result'), result: AcmpResultSchema, chunks: z.array(PayloadSchema).optional() }),
  z.object({ kind: z.literal('error'), error: AcmpErrorObjectSchema }),
]);
export type TaskOutcome = z.infer<typeof TaskOutcomeSchema>;

/** A task as the store holds it. Times are Unix milliseconds. */
export interface AcmpTaskRecord {
  readonly taskId: string;
  /** JCS hash of the invoke params that identify the task (docs/acmp-core.md "Duplicates"). */
  readonly paramsHash: string;
  /** The provider process that claimed and runs the task. */
  readonly ownerId: string;
  readonly state: 'running' | 'finished';
  readonly createdAt: number;
  /** Refreshed by the owner while the task runs; joiners on other hosts judge liveness by it. */
  readonly aliveAt: number;
  /** created_at + timeout_ms: the hard deadline (Layer 1 §3.1 `timeout_ms`). */
  readonly deadlineAt: number;
  /** Set by an `acmp/cancel` that reached a process not running the task; the owner polls it. */
  readonly cancelRequested: boolean;
  /** Present exactly when `state` is `finished`. */
  readonly outcome?: TaskOutcome;
  readonly finishedAt?: number;
}

/** What a claim writes. */
export interface NewAcmpTask {
  readonly taskId: string;
  readonly paramsHash: string;
  readonly ownerId: string;
  readonly createdAt: number;
  readonly deadlineAt: number;
}

/** Extra conditions of a compare-and-set {@link AcmpTaskStore.finish}; all must hold with `state = running`. */
export interface FinishCondition {
  /** Only when this process still owns the task. */
  readonly ownerId?: string;
  /** Only when the owner's last sign of life is older than this (a joiner declaring the owner dead). */
  readonly aliveBefore?: number;
}

/**
 * Durable task state behind `acmp/invoke` idempotency (Layer 1 §3.1.1). The store is the source of truth;
 * providers keep in-process maps only as caches, so several hosts can share one database.
 * Implementations: MemoryAcmpTaskStore, KyselyAcmpTaskStore (src/storage).
 */
export interface AcmpTaskStore {
  /** Atomically inserts a running task unless the task_id exists; then returns the existing record. */
  claim(task: NewAcmpTask): Promise<{ claimed: true } | { claimed: false; existing: AcmpTaskRecord }>;
  get(taskId: string): Promise<AcmpTaskRecord | undefined>;
  /**
   * Refreshes `alive_at` of a task this owner is running and reports whether a cancel was requested;
   * `undefined` when the task is no longer running under this owner.
   */
  touch(taskId: string, ownerId: string, aliveAt: number): Promise<{ cancelRequested: boolean } | undefined>;
  /** Compare-and-set running → finished; true when this call wrote the outcome. */
  finish(taskId: string, outcome: TaskOutcome, finishedAt: number, condition?: FinishCondition): Promise<boolean>;
  /** Sets `cancel_requested` on a running task; true when one was found. */
  requestCancel(taskId: string): Promise<boolean>;
}

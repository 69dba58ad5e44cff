import { z } from 'zod';
import { AcmpErrorObjectSchema } from '../wire/messages.js';
import { AcmpResultSchema, type Payload } from '../wire/task-messages.js';

/**
 * How a task ended, as stored. `result.output` is always present (the assembled output for a streamed
 * task); the chunks a streaming handler produced are stored beside the record (`chunkCount` of them), so
 * a retry with `stream: true` replays them, also after a restart (docs/acmp-core.md "The task record").
 */
export const TaskOutcomeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('result'), result: AcmpResultSchema }),
  z.object({ kind: z.literal('error'), error: AcmpErrorObjectSchema }),
]);
export type TaskOutcome = z.infer<typeof TaskOutcomeSchema>;

/** Who a task belongs to: the authenticated agent within a tenant. Only that scope may see or join it. */
export interface TaskScope {
  readonly tenant: string;
  readonly agent: string;
}

/**
 * How a finished task ended for the substrate's task API: `canceled` only when the substrate's own cancel
 * operation (A2A CancelTask) ended it; every other outcome, -33004 from `acmp/cancel` included, is
 * `completed` (A2A binding §3.4).
 */
export type TaskEnd = 'completed' | 'canceled';

/** The one record of an ACMP task (docs/acmp-core.md "The task record"). Times are Unix milliseconds. */
export interface AcmpTaskRecord {
  readonly taskId: string;
  readonly scope: TaskScope;
  /** JCS hash of the invoke params that identify the task (docs/acmp-core.md "Duplicates"). */
  readonly paramsHash: string;
  /** The conversation the substrate files the task under (A2A `context_id`). */
  readonly contextId: string;
  /** The invoke as the binding received it, in the binding's own encoding (opaque to the core). */
  readonly request: string;
  /** The host that claimed and runs (or ran) the task. */
  readonly hostId: string;
  readonly state: 'running' | 'finished';
  readonly createdAt: number;
  /** created_at + timeout_ms: the hard deadline (Layer 1 §3.1 `timeout_ms`). */
  readonly deadlineAt: number;
  /** created_at while running, finished_at after. */
  readonly updatedAt: number;
  /** How many output chunks are stored for the task (0 for a whole-output handler). */
  readonly chunkCount: number;
  /** Present exactly when `state` is `finished`. */
  readonly outcome?: TaskOutcome;
  readonly end?: TaskEnd;
  readonly finishedAt?: number;
}

/** A finished record: outcome and end are present. */
export type FinishedTaskRecord = AcmpTaskRecord & {
  readonly state: 'finished';
  readonly outcome: TaskOutcome;
  readonly end: TaskEnd;
};

/** Whether a record is finished (narrows it). */
export function isFinished(record: AcmpTaskRecord): record is FinishedTaskRecord {
  return record.state === 'finished' && record.outcome !== undefined && record.end !== undefined;
}

/**
 * A final record for an outcome that could not be stored (provider closing, database unreachable): what
 * the followers on this process are told. The store keeps its own state, which later reads show.
 */
export function unrecordedEnd(taskId: string, outcome: TaskOutcome, at: number): FinishedTaskRecord {
  return {
    taskId,
    scope: { tenant: '', agent: '' },
    paramsHash: '',
    contextId: '',
    request: '',
    hostId: '',
    state: 'finished',
    createdAt: at,
    deadlineAt: at,
    updatedAt: at,
    chunkCount: 0,
    outcome,
    end: 'completed',
    finishedAt: at,
  };
}

/** What a claim writes. */
export interface NewAcmpTask {
  readonly taskId: string;
  readonly scope: TaskScope;
  readonly paramsHash: string;
  readonly contextId: string;
  readonly request: string;
  readonly hostId: string;
  readonly createdAt: number;
  readonly deadlineAt: number;
}

/** Chunks a running task's owner appends (Layer 1 §7.1 order: `from`, `from + 1`, …). */
export interface AppendChunks {
  /** The host that must still own the task. */
  readonly hostId: string;
  /** The index of the first chunk: the count already stored. */
  readonly from: number;
  readonly chunks: readonly Payload[];
}

/** A compare-and-set running → finished. */
export interface FinishTask {
  readonly outcome: TaskOutcome;
  readonly end: TaskEnd;
  readonly at: number;
  /** Only while this host still owns the task (the owner writing its own outcome). */
  readonly hostId?: string;
}

/** What a claim found: the task id was free and is now this host's, was taken, or the caller is at its cap. */
export type ClaimOutcome =
  | { readonly claimed: true }
  | { readonly claimed: false; readonly existing: AcmpTaskRecord; readonly capReached?: undefined }
  /** The caller (`scope.agent`, in every tenant together) already has `maxRunning` tasks running. */
  | { readonly claimed: false; readonly existing?: undefined; readonly capReached: true };

/**
 * A change of a task, pushed to every host that watches it (on PostgreSQL through LISTEN/NOTIFY, in
 * process otherwise). Signals carry no payload data: a watcher reads what changed from the store.
 */
export type TaskSignal =
  | { readonly kind: 'chunks'; readonly taskId: string; readonly count: number }
  | {
      readonly kind: 'heartbeat';
      readonly taskId: string;
      readonly progress?: number;
      readonly detail?: string;
    }
  | { readonly kind: 'finished'; readonly taskId: string }
  /** Signals may have been lost (the notification connection was re-established): read the record again. */
  | { readonly kind: 'resync'; readonly taskId: string };

/** Filters and page of {@link AcmpTaskStore.list}; the order is `updatedAt` then `taskId`, both descending. */
export interface TaskListQuery {
  readonly contextId?: string;
  readonly state?: 'running' | TaskEnd;
  readonly updatedAfter?: number;
  /** Only records strictly after this cursor in the order. */
  readonly after?: { readonly updatedAt: number; readonly taskId: string };
  readonly limit: number;
}

/** A host taking part in the shared store, with its last sign of life. */
export interface HostBeat {
  readonly hostId: string;
  readonly at: number;
}

/**
 * The record of truth of ACMP tasks (Layer 1 §3.1.1 idempotency, §3.6 liveness, §3.7 cancel) shared by
 * every host on one database. Implementations: MemoryAcmpTaskStore, KyselyAcmpTaskStore (src/storage).
 */
export interface AcmpTaskStore {
  /**
   * Inserts a running task unless the task_id exists, atomically; returns the existing record otherwise.
   * Its scope and params hash never change, so the caller can decide what the request is from it. With
   * `maxRunning`, a new task is inserted only while its caller has fewer running tasks than that, counted
   * over every tenant and every host sharing the store (exactly, also for concurrent claims); an existing
   * task id is returned whatever the count.
   */
  claim(task: NewAcmpTask, maxRunning?: number): Promise<ClaimOutcome>;
  get(taskId: string): Promise<AcmpTaskRecord | undefined>;
  /** The stored chunks of a task from index `from`, in order. */
  chunks(taskId: string, from: number): Promise<Payload[]>;
  /**
   * Appends chunks `from`, `from + 1`, … of a task this host runs, then signals `chunks`.
   * False when the task is no longer running under `hostId`.
   */
  appendChunks(taskId: string, append: AppendChunks): Promise<boolean>;
  /**
   * Compare-and-set running → finished, then signals `finished`. Returns the record as stored afterwards
   * and whether this call wrote it; `undefined` for an unknown task.
   */
  finish(taskId: string, finish: FinishTask): Promise<{ won: boolean; record: AcmpTaskRecord } | undefined>;
  /** Signals a heartbeat of a running task to its watchers (nothing is written). */
  heartbeat(taskId: string, progress?: number, detail?: string): void;
  /** Calls `listener` for every signal of the task until the returned function is called. */
  watch(taskId: string, listener: (signal: TaskSignal) => void): () => void;
  /** The records of one scope, filtered and paged; `total` counts every match. */
  list(scope: TaskScope, query: TaskListQuery): Promise<{ records: AcmpTaskRecord[]; total: number }>;
  /** Records that this host is alive (inserts its row the first time). */
  beat(host: HostBeat): Promise<void>;
  /** Removes a host's row (clean shutdown). */
  retire(hostId: string): Promise<void>;
  /**
   * Running tasks whose host has not beaten since `staleBefore`, or has no row and claimed them before
   * then (a host claims before its first beat lands), at most `limit`.
   */
  orphans(staleBefore: number, limit: number): Promise<string[]>;
  /** Which of `taskIds` (running here, as far as `hostId` knows) are no longer running under it. */
  lost(hostId: string, taskIds: readonly string[]): Promise<string[]>;
  /** Stops watching (closes a notification connection). */
  close?(): Promise<void>;
}

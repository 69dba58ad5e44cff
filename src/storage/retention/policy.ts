/**
 * How long ended work is kept (docs/operations.md "Retention"); each age counts from when the work
 * ended, `null` keeps it forever. Escrow records, wallet ledgers, ACPspec events and audit logs have no
 * age here: they are never pruned.
 */
export interface RetentionAges {
  /** Finished ACMP tasks' results and chunks, and ended A2A tasks of the SDK's store. */
  readonly tasksMs: number | null;
  /**
   * The row an ACMP task id keeps after its result was pruned (the idempotency key, Layer 1 §3.1.1),
   * counted from that pruning.
   */
  readonly taskIdsMs: number | null;
  /** Ended negotiation sessions (accepted, expired, canceled). */
  readonly sessionsMs: number | null;
}

/** How pruning paces itself: rows per statement, and the pause between two statements. */
export interface PruneBatching {
  readonly batchSize: number;
  readonly pauseMs: number;
  /**
   * The most of its time a pass may spend in statements (default 1/20, src/storage/retention/batches.ts):
   * the pause grows with the statements' cost to keep it. 1: the pause alone paces the pass.
   */
  readonly maxWorkShare?: number;
}

/** What a prune removes, one kind of row each. */
export type PruneKind =
  'task_results' | 'task_chunks' | 'task_ids' | 'sessions' | 'a2a_tasks' | 'a2a_push_configs';

/** How many rows of one kind a prune removed (or, dry, would remove). */
export interface PruneCount {
  readonly kind: PruneKind;
  readonly table: string;
  readonly rows: number;
}

import { PRUNED_TASK_OUTCOME } from '../../acmp/provider/pruned-task.js';
import { inBatches, pause, type BatchLoop } from './batches.js';
import { counted, countQuery } from './count-query.js';
import type { PruneCount } from './policy.js';
import type { SqlDialect } from '../sql/database.js';
import { column, sqlQuery, text, type BoundSql, type Query } from '../sql/query.js';
import { jsonStrings } from '../sql/sql-text.js';

/** When the pass runs, and the cut-offs it applies (each `null`: that kind is kept). */
export interface TaskCuts {
  readonly now: number;
  /** Tasks that finished before this lose their result and chunks. */
  readonly resultsBefore: number | null;
  /** Task ids pruned before this are forgotten (their key row is deleted). */
  readonly idsBefore: number | null;
}

/**
 * Reservations of an escrow still in play (docs/acmp-escrow.md "The provider side"): the task they back
 * keeps its result until the escrow is settled or void, so a claim or dispute can still be answered.
 */
const UNSETTLED_ESCROW = `AND NOT EXISTS (SELECT 1 FROM acmp_escrow_reservations r
  WHERE r.task_id = t.task_id AND r.state IN ('reserved', 'delivered', 'claimed'))`;

/**
 * Retention of ACMP tasks (docs/operations.md "Retention"), in two stages. A finished task past the
 * results age loses its chunks, then its result and request: the row stays with its id, caller, params
 * hash and times and answers every later invoke of the id with {@link PRUNED_TASK_OUTCOME} (Layer 1
 * §3.1.1: the id is never executed twice). Past the ids age the row goes too. A running task (no
 * `finished_at`) is never touched; neither is a task whose escrow is unsettled.
 */
export class AcmpTaskRetention {
  private readonly statements: TaskStatements;

  constructor(
    private readonly sql: BoundSql,
    options: { readonly dialect: SqlDialect; readonly escrowReservations: boolean },
  ) {
    this.statements = taskStatements(options);
  }

  /** What a prune at `cuts` would remove, exactly (nothing is changed). */
  async count(cuts: TaskCuts): Promise<PruneCount[]> {
    const counts: PruneCount[] = [];
    if (cuts.resultsBefore !== null) {
      const at = [cuts.resultsBefore];
      counts.push(
        {
          kind: 'task_results',
          table: 'acmp_tasks',
          rows: await counted(this.sql, this.statements.countResults, at),
        },
        {
          kind: 'task_chunks',
          table: 'acmp_task_chunks',
          rows: await counted(this.sql, this.statements.countChunks, at),
        },
      );
    }
    if (cuts.idsBefore !== null)
      counts.push({
        kind: 'task_ids',
        table: 'acmp_tasks',
        rows: await counted(this.sql, this.statements.countIds, [cuts.idsBefore]),
      });
    return counts;
  }

  /** Prunes in batches: results (chunks first), then expired ids. */
  async prune(cuts: TaskCuts, loop: BatchLoop): Promise<PruneCount[]> {
    const counts: PruneCount[] = [];
    if (cuts.resultsBefore !== null) {
      const before = cuts.resultsBefore;
      let chunks = 0;
      const results = await inBatches(async () => {
        const batch = await this.nextResults(before, loop.batching.batchSize);
        const deleted = await this.deleteChunks(batch, loop);
        chunks += deleted.rows;
        // Stopped halfway through the chunks: the tasks keep their results until the next pass.
        return deleted.complete ? this.compact(batch, cuts.now) : 0;
      }, loop);
      counts.push(
        { kind: 'task_results', table: 'acmp_tasks', rows: results },
        { kind: 'task_chunks', table: 'acmp_task_chunks', rows: chunks },
      );
    }
    if (cuts.idsBefore !== null) {
      const before = cuts.idsBefore;
      const rows = await inBatches(
        () => this.sql.exec(this.statements.deleteIds, [before, loop.batching.batchSize]),
        loop,
      );
      counts.push({ kind: 'task_ids', table: 'acmp_tasks', rows });
    }
    return counts;
  }

  /** The ids of the next batch of tasks whose results are due, oldest first. */
  private async nextResults(before: number, limit: number): Promise<string[]> {
    return this.sql.rows(this.statements.nextResults, [before, limit]);
  }

  /**
   * Deletes the chunks of a batch of tasks, a batch of rows per statement (one task may have many). The
   * chunks go before the result, so a crash in between leaves a task that the next pass picks again.
   */
  private async deleteChunks(
    taskIds: readonly string[],
    loop: BatchLoop,
  ): Promise<{ rows: number; complete: boolean }> {
    if (taskIds.length === 0) return { rows: 0, complete: true };
    const ids = JSON.stringify(taskIds);
    let total = 0;
    for (;;) {
      const started = performance.now();
      const rows = await this.sql.exec(this.statements.deleteChunks, [ids, loop.batching.batchSize]);
      total += rows;
      if (rows < loop.batching.batchSize) return { rows: total, complete: true };
      if (!(await pause(loop, performance.now() - started))) return { rows: total, complete: false };
    }
  }

  /** Drops the result and request of a batch of finished tasks, keeping each row as its id's key. */
  private compact(taskIds: readonly string[], now: number): Promise<number> {
    if (taskIds.length === 0) return Promise.resolve(0);
    // Each id is looked up by its key. Without table statistics SQLite's planner preferred the state or
    // the retention index and walked every finished task (a step of 500 tasks took ~350 ms on a
    // 500,000-task table); the re-checks are written as expressions no index serves (`state || ''`,
    // `COALESCE`), which leaves the key as its only choice, on PostgreSQL too.
    const list = taskIds.map((_, i) => `$${i + 3}`).join(', ');
    return this.sql.exec(
      `UPDATE acmp_tasks SET outcome = $1, request = '', chunk_count = 0, pruned_at = $2
       WHERE task_id IN (${list}) AND state || '' = 'finished' AND COALESCE(pruned_at, -1) = -1`,
      [JSON.stringify(PRUNED_TASK_OUTCOME), now, ...taskIds],
    );
  }
}

/** The statements of {@link AcmpTaskRetention}, written once per database (the batch update is per batch). */
interface TaskStatements {
  readonly countResults: Query<number>;
  readonly countChunks: Query<number>;
  readonly countIds: Query<number>;
  readonly nextResults: Query<string>;
  readonly deleteIds: string;
  readonly deleteChunks: string;
}

function taskStatements(options: {
  readonly dialect: SqlDialect;
  readonly escrowReservations: boolean;
}): TaskStatements {
  const candidates = `FROM acmp_tasks t WHERE t.state = 'finished' AND t.pruned_at IS NULL AND t.finished_at < $1
      ${options.escrowReservations ? UNSETTLED_ESCROW : ''}`;
  return {
    countResults: countQuery(candidates),
    countChunks: countQuery(`FROM acmp_task_chunks c WHERE c.task_id IN (SELECT t.task_id ${candidates})`),
    countIds: countQuery(`FROM acmp_tasks WHERE pruned_at < $1`),
    nextResults: sqlQuery(
      `SELECT t.task_id AS task_id ${candidates} ORDER BY t.finished_at LIMIT $2`,
      column('task_id', text),
    ),
    deleteIds: `DELETE FROM acmp_tasks WHERE task_id IN (SELECT task_id FROM acmp_tasks WHERE pruned_at < $1 LIMIT $2)`,
    deleteChunks: `DELETE FROM acmp_task_chunks WHERE (task_id, seq) IN
          (SELECT task_id, seq FROM acmp_task_chunks WHERE task_id IN (${jsonStrings(options.dialect, 1)}) LIMIT $2)`,
  };
}

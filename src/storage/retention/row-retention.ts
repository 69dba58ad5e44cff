import { z } from 'zod';
import type { SessionPhase } from '../../acmp/negotiation/session.js';
import type { SdkStoreTables } from '../a2a/sdk-store-migrations.js';
import { inBatches, type BatchLoop } from './batches.js';
import { counted, countQuery } from './count-query.js';
import type { PruneCount } from './policy.js';
import type { SqlDialect } from '../sql/database.js';
import { rowOf, sqlQuery, type BoundSql, type Query } from '../sql/query.js';
import { jsonKeys } from '../sql/sql-text.js';

/** The phases in which a negotiation session has ended (docs/acmp-negotiation.md "Session mode"). */
const ENDED_PHASES = ['accepted', 'expired', 'canceled'] as const satisfies readonly SessionPhase[];

/** An ended session last changed before the cut-off `$1`. */
const ENDED_SESSION = `phase IN (${ENDED_PHASES.map((p) => `'${p}'`).join(', ')}) AND updated_at < $1`;
const COUNT_ENDED_SESSIONS = countQuery(`FROM acmp_sessions WHERE ${ENDED_SESSION}`);
const DELETE_ENDED_SESSIONS = `DELETE FROM acmp_sessions WHERE session_id IN
  (SELECT session_id FROM acmp_sessions WHERE ${ENDED_SESSION} LIMIT $2)`;

/**
 * Ended negotiation sessions, deleted a batch per statement once they ended (last changed) before the
 * cut-off. An open session — one still due to end, however old — is never touched; an accepted session's
 * agreement lives in `acmp_agreements` and is kept (its invoke window is minutes, far below any age).
 */
export class SessionRetention {
  constructor(private readonly sql: BoundSql) {}

  async count(before: number): Promise<PruneCount> {
    const rows = await counted(this.sql, COUNT_ENDED_SESSIONS, [before]);
    return { kind: 'sessions', table: 'acmp_sessions', rows };
  }

  async prune(before: number, loop: BatchLoop): Promise<PruneCount> {
    const rows = await inBatches(
      () => this.sql.exec(DELETE_ENDED_SESSIONS, [before, loop.batching.batchSize]),
      loop,
    );
    return { kind: 'sessions', table: 'acmp_sessions', rows };
  }
}

/** The SDK's terminal task states (A2A §6.3): a task in one of them takes no further message. */
const ENDED_STATES = [
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
];

/**
 * Ended plain A2A tasks in the SDK's task store, with their push-notification configs (ACMP tasks are
 * never stored there: they are views of `acmp_tasks`). A task waiting for input or authorisation has not
 * ended and is kept.
 */
export class SdkTaskRetention {
  private readonly statements: SdkTaskStatements;

  constructor(
    private readonly sql: BoundSql,
    options: { readonly dialect: SqlDialect; readonly tables: SdkStoreTables },
  ) {
    this.statements = sdkTaskStatements(options.dialect, options.tables);
  }

  async count(before: number): Promise<PruneCount[]> {
    const { tasks, pushNotificationConfigs: push } = this.statements.tables;
    return [
      {
        kind: 'a2a_tasks',
        table: tasks,
        rows: await counted(this.sql, this.statements.countTasks, [before]),
      },
      {
        kind: 'a2a_push_configs',
        table: push,
        rows: await counted(this.sql, this.statements.countConfigs, [before]),
      },
    ];
  }

  /** A batch of ended tasks per round: their push configs first, then the tasks (a crash in between leaves tasks the next pass finds). */
  async prune(before: number, loop: BatchLoop): Promise<PruneCount[]> {
    const { tasks, pushNotificationConfigs: push } = this.statements.tables;
    let configs = 0;
    const rows = await inBatches(async () => {
      const keys = await this.sql.rows(this.statements.nextEnded, [before, loop.batching.batchSize]);
      if (keys.length === 0) return 0;
      const batch = JSON.stringify(keys);
      configs += await this.sql.exec(this.statements.deleteConfigs, [batch]);
      return this.sql.exec(this.statements.deleteTasks, [before, batch]);
    }, loop);
    return [
      { kind: 'a2a_tasks', table: tasks, rows },
      { kind: 'a2a_push_configs', table: push, rows: configs },
    ];
  }
}

/** The key of an SDK task row (`tenant`, `owner`, `id`: its primary key, src/storage/a2a/sdk-store-migrations.ts). */
const SdkTaskKey = z.object({ tenant: z.string(), owner: z.string(), id: z.string() });

/** The statements of {@link SdkTaskRetention} on one database's SDK tables. */
interface SdkTaskStatements {
  readonly tables: SdkStoreTables;
  readonly countTasks: Query<number>;
  readonly countConfigs: Query<number>;
  readonly nextEnded: Query<z.infer<typeof SdkTaskKey>>;
  readonly deleteConfigs: string;
  readonly deleteTasks: string;
}

function sdkTaskStatements(dialect: SqlDialect, tables: SdkStoreTables): SdkTaskStatements {
  const { tasks, pushNotificationConfigs: push } = tables;
  const where = `status_state IN (${ENDED_STATES.map((s) => `'${s}'`).join(', ')}) AND status_last_updated < $1`;
  return {
    tables,
    countTasks: countQuery(`FROM ${tasks} WHERE ${where}`),
    countConfigs: countQuery(
      `FROM ${push} p WHERE (p.tenant, p.owner, p.task_id) IN (SELECT tenant, owner, id FROM ${tasks} WHERE ${where})`,
    ),
    nextEnded: sqlQuery(
      `SELECT tenant, owner, id FROM ${tasks} WHERE ${where} LIMIT $2`,
      rowOf(SdkTaskKey, tasks),
    ),
    deleteConfigs: `DELETE FROM ${push} WHERE (tenant, owner, task_id) IN (${jsonKeys(dialect, 1)})`,
    deleteTasks: `DELETE FROM ${tasks} WHERE (tenant, owner, id) IN (${jsonKeys(dialect, 2)}) AND ${where}`,
  };
}

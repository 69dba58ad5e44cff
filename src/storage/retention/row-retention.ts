import type { SessionPhase } from '../../acmp/negotiation/session.js';
import type { SdkStoreTables } from '../a2a/sdk-store-migrations.js';
import { inBatches, type BatchLoop } from './batches.js';
import type { PruneCount } from './policy.js';
import type { SqlRunner } from './sql-runner.js';

/** The phases in which a negotiation session has ended (docs/acmp-negotiation.md "Session mode"). */
const ENDED_PHASES = ['accepted', 'expired', 'canceled'] as const satisfies readonly SessionPhase[];

/**
 * Ended negotiation sessions, deleted a batch per statement once they ended (last changed) before the
 * cut-off. An open session — one still due to end, however old — is never touched; an accepted session's
 * agreement lives in `acmp_agreements` and is kept (its invoke window is minutes, far below any age).
 */
export class SessionRetention {
  private readonly where = `phase IN (${ENDED_PHASES.map((p) => `'${p}'`).join(', ')}) AND updated_at < $1`;

  constructor(private readonly sql: SqlRunner) {}

  async count(before: number): Promise<PruneCount> {
    const rows = await this.sql.count(`SELECT COUNT(*) AS n FROM acmp_sessions WHERE ${this.where}`, [
      before,
    ]);
    return { kind: 'sessions', table: 'acmp_sessions', rows };
  }

  async prune(before: number, loop: BatchLoop): Promise<PruneCount> {
    const rows = await inBatches(
      () =>
        this.sql.changed(
          `DELETE FROM acmp_sessions WHERE session_id IN (SELECT session_id FROM acmp_sessions WHERE ${this.where} LIMIT $2)`,
          [before, loop.batching.batchSize],
        ),
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
  private readonly where: string;

  constructor(
    private readonly sql: SqlRunner,
    private readonly tables: SdkStoreTables,
  ) {
    this.where = `status_state IN (${ENDED_STATES.map((s) => `'${s}'`).join(', ')}) AND status_last_updated < $1`;
  }

  async count(before: number): Promise<PruneCount[]> {
    const { tasks, pushNotificationConfigs: push } = this.tables;
    return [
      {
        kind: 'a2a_tasks',
        table: tasks,
        rows: await this.sql.count(`SELECT COUNT(*) AS n FROM ${tasks} WHERE ${this.where}`, [before]),
      },
      {
        kind: 'a2a_push_configs',
        table: push,
        rows: await this.sql.count(
          `SELECT COUNT(*) AS n FROM ${push} p WHERE (p.tenant, p.owner, p.task_id) IN (SELECT tenant, owner, id FROM ${tasks} WHERE ${this.where})`,
          [before],
        ),
      },
    ];
  }

  /** A batch of ended tasks per round: their push configs first, then the tasks (a crash in between leaves tasks the next pass finds). */
  async prune(before: number, loop: BatchLoop): Promise<PruneCount[]> {
    const { tasks, pushNotificationConfigs: push } = this.tables;
    let configs = 0;
    const rows = await inBatches(async () => {
      const keys = await this.sql.rows(
        `SELECT tenant, owner, id FROM ${tasks} WHERE ${this.where} LIMIT $2`,
        [before, loop.batching.batchSize],
      );
      if (keys.length === 0) return 0;
      const batch = JSON.stringify(keys);
      configs += await this.sql.changed(
        `DELETE FROM ${push} WHERE (tenant, owner, task_id) IN (${this.sql.jsonKeys(1)})`,
        [batch],
      );
      return this.sql.changed(
        `DELETE FROM ${tasks} WHERE (tenant, owner, id) IN (${this.sql.jsonKeys(2)}) AND ${this.where}`,
        [before, batch],
      );
    }, loop);
    return [
      { kind: 'a2a_tasks', table: tasks, rows },
      { kind: 'a2a_push_configs', table: push, rows: configs },
    ];
  }
}

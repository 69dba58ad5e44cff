import { sql, type Kysely, type Migration } from 'kysely';
import { LocalError } from '../shared/errors.js';
import { QueryShapes } from './query-shapes.js';
import {
  TaskOutcomeSchema,
  type AcmpTaskRecord,
  type AcmpTaskStore,
  type FinishCondition,
  type NewAcmpTask,
  type TaskOutcome,
} from '../acmp/task-store.js';
import type { MigrationSet } from './migrations.js';

const TABLE = 'acmp_tasks';

interface TaskRow {
  task_id: string;
  params_hash: string;
  owner_id: string;
  state: string;
  created_at: number | string;
  alive_at: number | string;
  deadline_at: number | string;
  cancel_requested: number | string;
  outcome: string | null;
  finished_at: number | string | null;
}

interface Tables {
  [TABLE]: TaskRow;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against an untyped schema */
const createTasks: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable(TABLE)
      .addColumn('task_id', 'text', (c) => c.primaryKey())
      .addColumn('params_hash', 'text', (c) => c.notNull())
      .addColumn('owner_id', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('alive_at', 'bigint', (c) => c.notNull())
      .addColumn('deadline_at', 'bigint', (c) => c.notNull())
      .addColumn('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('outcome', 'text')
      .addColumn('finished_at', 'bigint')
      .execute();
    await db.schema.createIndex(`${TABLE}_state_alive`).on(TABLE).columns(['state', 'alive_at']).execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable(TABLE).execute();
  },
};
/* eslint-enable @typescript-eslint/no-explicit-any */

/** The `acmp` migration set: one table, `acmp_tasks` (works on SQLite and PostgreSQL). */
export const acmpMigrations: MigrationSet = { id: 'acmp', migrations: { '0001_acmp_tasks': createTasks } };

/**
 * {@link AcmpTaskStore} on SQLite or PostgreSQL through Kysely. `claim` is an atomic
 * `INSERT … ON CONFLICT DO NOTHING`; `touch`, `finish` and `requestCancel` are single conditional UPDATEs
 * (compare-and-set on `state = 'running'`), so several hosts can share the table.
 */
export class KyselyAcmpTaskStore implements AcmpTaskStore {
  private readonly db: Kysely<Tables>;
  private readonly shapes = new QueryShapes();

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the shared Database instance is untyped
  constructor(db: Kysely<any>) {
    this.db = db as Kysely<Tables>;
  }

  async claim(task: NewAcmpTask): Promise<{ claimed: true } | { claimed: false; existing: AcmpTaskRecord }> {
    const values = {
      task_id: task.taskId,
      params_hash: task.paramsHash,
      owner_id: task.ownerId,
      state: 'running',
      created_at: task.createdAt,
      alive_at: task.createdAt,
      deadline_at: task.deadlineAt,
      cancel_requested: 0,
      outcome: null,
      finished_at: null,
    };
    const inserted = await this.shapes.run(this.db, 'claim', Object.values(values), () =>
      this.db
        .insertInto(TABLE)
        .values(values)
        .onConflict((oc) => oc.column('task_id').doNothing()),
    );
    if (Number(inserted.numAffectedRows ?? 0n) === 1) return { claimed: true };
    const existing = await this.get(task.taskId);
    if (!existing) throw new LocalError('INVALID_STATE', 'claimed task row vanished');
    return { claimed: false, existing };
  }

  async get(taskId: string): Promise<AcmpTaskRecord | undefined> {
    const { rows } = await this.shapes.run(this.db, 'get', [taskId], () => this.db.selectFrom(TABLE).selectAll().where('task_id', '=', taskId));
    const row = rows[0];
    return row && decodeRow(row);
  }

  async touch(taskId: string, ownerId: string, aliveAt: number): Promise<{ cancelRequested: boolean } | undefined> {
    const row = await this.db
      .updateTable(TABLE)
      .set({ alive_at: aliveAt })
      .where('task_id', '=', taskId)
      .where('owner_id', '=', ownerId)
      .where('state', '=', 'running')
      .returning('cancel_requested')
      .executeTakeFirst();
    return row && { cancelRequested: Number(row.cancel_requested) !== 0 };
  }

  async finish(taskId: string, outcome: TaskOutcome, finishedAt: number, condition?: FinishCondition): Promise<boolean> {
    const text = JSON.stringify(outcome);
    const owner = condition?.ownerId;
    const aliveBefore = condition?.aliveBefore;
    const parameters = ['finished', text, finishedAt, taskId, 'running', ...(owner !== undefined ? [owner] : []), ...(aliveBefore !== undefined ? [aliveBefore] : [])];
    const result = await this.shapes.run(this.db, `finish:${owner !== undefined}:${aliveBefore !== undefined}`, parameters, () => {
      let query = this.db
        .updateTable(TABLE)
        .set({ state: 'finished', outcome: text, finished_at: finishedAt })
        .where('task_id', '=', taskId)
        .where('state', '=', 'running');
      if (owner !== undefined) query = query.where('owner_id', '=', owner);
      if (aliveBefore !== undefined) query = query.where('alive_at', '<', aliveBefore);
      return query;
    });
    return Number(result.numAffectedRows ?? 0n) === 1;
  }

  async requestCancel(taskId: string): Promise<boolean> {
    const result = await this.db
      .updateTable(TABLE)
      .set({ cancel_requested: sql<number>`1` })
      .where('task_id', '=', taskId)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}

/** Rows are validated here, at the edge (STYLE.md "Boundaries"); PostgreSQL returns bigint as strings. */
function decodeRow(row: TaskRow): AcmpTaskRecord {
  if (row.state !== 'running' && row.state !== 'finished') {
    throw new LocalError('INVALID_STATE', 'acmp_tasks row has an unknown state');
  }
  const base = {
    taskId: row.task_id,
    paramsHash: row.params_hash,
    ownerId: row.owner_id,
    state: row.state,
    createdAt: Number(row.created_at),
    aliveAt: Number(row.alive_at),
    deadlineAt: Number(row.deadline_at),
    cancelRequested: Number(row.cancel_requested) !== 0,
  } as const;
  if (row.outcome === null) return base;
  const parsed = TaskOutcomeSchema.safeParse(JSON.parse(row.outcome));
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'acmp_tasks row has a malformed outcome');
  return { ...base, outcome: parsed.data, finishedAt: Number(row.finished_at) };
}

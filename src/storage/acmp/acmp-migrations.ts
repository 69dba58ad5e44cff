import { z } from 'zod';
import type { MigrationSet, SqlMigration } from '../sql/migrations.js';
import { agreementsMigration } from './acmp-agreement-store-kysely.js';
import { sessionsMigration } from './acmp-session-store-kysely.js';
import { ownerIdentityMigration, type OwnerColumn } from '../sql/owner-columns.js';
import type { SqlKysely } from '../sql/query.js';

/** Where ACMP records who owns a task (for migrations and `a2a-commerce reassign`). */
export const ACMP_OWNER_COLUMNS: readonly OwnerColumn[] = [
  { table: 'acmp_tasks', column: 'agent' },
  { table: 'acmp_agreements', column: 'agent' },
  { table: 'acmp_sessions', column: 'agent' },
];

const createTasks: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('acmp_tasks')
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
    await db.schema
      .createIndex('acmp_tasks_state_alive')
      .on('acmp_tasks')
      .columns(['state', 'alive_at'])
      .execute();
  },
  async down(db: SqlKysely): Promise<void> {
    await db.schema.dropTable('acmp_tasks').execute();
  },
};

/**
 * One record per task (docs/acmp-core.md "The task record"): the caller's scope, the invoke, the context
 * and how the task ended move into `acmp_tasks`; chunks get their own table; host liveness is one row per
 * host. Rows written before this migration are completed from the SDK's copy of the same task (its owner,
 * tenant, context and first history message), which is then deleted, so no task is kept twice.
 */
const oneRecord: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema.alterTable('acmp_tasks').renameColumn('owner_id', 'host_id').execute();
    for (const [name, type, fallback] of [
      ['tenant', 'text', ''],
      ['agent', 'text', ''],
      ['context_id', 'text', ''],
      ['request', 'text', ''],
      ['chunk_count', 'integer', 0],
      ['updated_at', 'bigint', 0],
    ] as const) {
      await db.schema
        .alterTable('acmp_tasks')
        .addColumn(name, type, (c) => c.notNull().defaultTo(fallback))
        .execute();
    }
    await db.schema.alterTable('acmp_tasks').addColumn('end_state', 'text').execute();
    await db.schema
      .createTable('acmp_task_chunks')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('chunk', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('acmp_task_chunks_pk', ['task_id', 'seq'])
      .execute();
    await db.schema
      .createTable('acmp_hosts')
      .addColumn('host_id', 'text', (c) => c.primaryKey())
      .addColumn('alive_at', 'bigint', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .execute();
    await moveLegacyRows(db);
    await db.schema.dropIndex('acmp_tasks_state_alive').execute();
    await db.schema.alterTable('acmp_tasks').dropColumn('alive_at').execute();
    await db.schema.alterTable('acmp_tasks').dropColumn('cancel_requested').execute();
    await db.schema
      .createIndex('acmp_tasks_running')
      .on('acmp_tasks')
      .columns(['state', 'host_id'])
      .execute();
    await db.schema
      .createIndex('acmp_tasks_scope')
      .on('acmp_tasks')
      .columns(['tenant', 'agent', 'updated_at', 'task_id'])
      .execute();
  },
};

const LegacyOutcome = z.looseObject({ kind: z.string(), chunks: z.array(z.unknown()).optional() });
const LegacySdkRow = z.object({
  tenant: z.string(),
  owner: z.string(),
  context_id: z.string(),
  status_state: z.string().nullable(),
  history: z.string().nullable(),
});

const Millis = z.union([z.number(), z.string()]);
const LegacyTaskRow = z.object({
  task_id: z.string(),
  outcome: z.string().nullable(),
  created_at: Millis,
  finished_at: Millis.nullable(),
});

/** Completes rows stored before one-record from the SDK's `tasks` table and moves stored chunks out. */
async function moveLegacyRows(db: SqlKysely): Promise<void> {
  const rows = z
    .array(LegacyTaskRow)
    .parse(
      await db.selectFrom('acmp_tasks').select(['task_id', 'outcome', 'created_at', 'finished_at']).execute(),
    );
  const sdkTable = await hasTable(db, 'tasks');
  for (const row of rows) {
    const updates: Record<string, unknown> = { updated_at: Number(row.finished_at ?? row.created_at) };
    const sdk = sdkTable
      ? LegacySdkRow.safeParse(
          await db.selectFrom('tasks').selectAll().where('id', '=', row.task_id).executeTakeFirst(),
        )
      : undefined;
    if (sdk?.success) {
      const first = firstHistoryMessage(sdk.data.history);
      Object.assign(updates, {
        tenant: sdk.data.tenant,
        agent: sdk.data.owner,
        context_id: sdk.data.context_id,
        request: first,
      });
      updates.end_state = sdk.data.status_state === 'TASK_STATE_CANCELED' ? 'canceled' : 'completed';
    } else updates.end_state = 'completed';
    const outcome = row.outcome === null ? undefined : LegacyOutcome.safeParse(JSON.parse(row.outcome));
    if (outcome?.success && outcome.data.chunks) {
      const { chunks, ...rest } = outcome.data;
      for (const [seq, chunk] of chunks.entries()) {
        await db
          .insertInto('acmp_task_chunks')
          .values({ task_id: row.task_id, seq, chunk: JSON.stringify(chunk) })
          .execute();
      }
      Object.assign(updates, { outcome: JSON.stringify(rest), chunk_count: chunks.length });
    }
    if (row.outcome === null) updates.end_state = null;
    await db.updateTable('acmp_tasks').set(updates).where('task_id', '=', row.task_id).execute();
    if (sdk?.success) await db.deleteFrom('tasks').where('id', '=', row.task_id).execute();
  }
}

function firstHistoryMessage(history: string | null): string {
  if (history === null) return '';
  const parsed = z.array(z.unknown()).safeParse(JSON.parse(history));
  return parsed.success && parsed.data.length > 0 ? JSON.stringify(parsed.data[0]) : '';
}

async function hasTable(db: SqlKysely, name: string): Promise<boolean> {
  const tables = await db.introspection.getTables();
  return tables.some((t) => t.name === name);
}
/**
 * Indexes for the caps per caller identity (docs/acmp-core.md "Limits per caller"): every capped claim
 * counts the caller's running tasks, and every session opening its open sessions, over every tenant, so
 * both counts are looked up by `agent` first (the scope indexes begin with `tenant`).
 */
const callerLimitIndexes: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createIndex('acmp_tasks_agent_state')
      .on('acmp_tasks')
      .columns(['agent', 'state'])
      .execute();
    await db.schema
      .createIndex('acmp_sessions_agent_due')
      .on('acmp_sessions')
      .columns(['agent', 'due_at'])
      .execute();
  },
};
/**
 * Retention (docs/operations.md "Retention"): `pruned_at` marks a task whose result and chunks were
 * pruned (its row stays as the key of its task id); the indexes let the pruner find finished tasks and
 * ended sessions by age without scanning the tables.
 */
const retention: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema.alterTable('acmp_tasks').addColumn('pruned_at', 'bigint').execute();
    await db.schema
      .createIndex('acmp_tasks_retention')
      .on('acmp_tasks')
      .columns(['pruned_at', 'finished_at'])
      .execute();
    await db.schema
      .createIndex('acmp_sessions_retention')
      .on('acmp_sessions')
      .columns(['phase', 'updated_at'])
      .execute();
  },
};

/** The `acmp` migration set (SQLite and PostgreSQL). */
export const acmpMigrations: MigrationSet = {
  id: 'acmp',
  migrations: {
    '0001_acmp_tasks': createTasks,
    '0002_one_record': oneRecord,
    // Owners copied from the SDK's rows by 0002 may still name a token by its position.
    '0003_owner_identities': ownerIdentityMigration(
      [{ table: 'acmp_tasks', column: 'agent' }],
      ['', 'unknown'],
    ),
    '0004_agreements': agreementsMigration,
    '0005_sessions': sessionsMigration,
    '0006_caller_limit_indexes': callerLimitIndexes,
    '0007_retention': retention,
  },
};

import { sql } from 'kysely';
import { SDK_STORE_TABLES } from '../../src/a2a/host/sdk-stores.js';
import type { TaskOutcome } from '../../src/acmp/provider/task-store.js';
import { migrateAll } from '../../src/server/host-migrations.js';
import { resolveHostConfig } from '../../src/server/config.js';
import { storageModules } from '../../src/cli/host-modules.js';
import { KyselyAcmpTaskStore } from '../../src/storage/acmp/acmp-task-store-kysely.js';
import { openDatabase, type Database } from '../../src/storage/sql/database.js';
import { KyselyReservationStore } from '../../src/storage/escrow/escrow-reservations.js';
import type { PruneBatching, PruneCount, RetentionAges } from '../../src/storage/retention/policy.js';
import { Pruner } from '../../src/storage/retention/pruner.js';
import { onCleanup, tempDir } from './cleanup.js';
import { freshPgDatabase } from './pg.js';

/** Helpers of the retention tests: migrated databases, rows of every pruned kind at chosen times. */

export const DAY = 86_400_000;
/** "Now" of the retention tests. */
export const NOW = 1_800_000_000_000;

/** The two databases retention runs on; PostgreSQL only with TEST_PG_URL. */
export const RETENTION_VARIANTS = [
  { name: 'SQLite', pg: false, url: () => Promise.resolve(`sqlite:${tempDir()}/retention.sqlite`) },
  { name: 'PostgreSQL', pg: true, url: freshPgDatabase },
].filter((v) => !v.pg || process.env.TEST_PG_URL);

/** A database with every table of every module, migrated; closed by cleanup. */
export async function migratedDatabase(url: string): Promise<Database> {
  const database = openDatabase({ url, dataDir: tempDir() });
  onCleanup(() => database.close());
  const modules = storageModules(resolveHostConfig({ db: url, 'no-tls': true, 'data-dir': tempDir() }, {}));
  await migrateAll(database, modules);
  return database;
}

const DEFAULT_AGES: RetentionAges = { tasksMs: 7 * DAY, taskIdsMs: 30 * DAY, sessionsMs: 7 * DAY };

/** A pruner at {@link NOW} (or `now`), small batches and no pause unless told. */
export function pruner(
  database: Database,
  options: { ages?: RetentionAges; batching?: PruneBatching; now?: number } = {},
): Pruner {
  return new Pruner(database, {
    ages: options.ages ?? DEFAULT_AGES,
    batching: options.batching ?? { batchSize: 3, pauseMs: 0 },
    sdkTables: SDK_STORE_TABLES,
    clock: { now: () => options.now ?? NOW },
  });
}

const RESULT: TaskOutcome = {
  kind: 'result',
  result: {
    task_id: 't',
    output: { type: 'text', data: 'ok' },
    output_streamed: false,
    tokens_used: 1,
    cost_cu: 0,
  },
};

/** An ACMP task through the real store: claimed at `at`, `chunks` appended, finished at `at` unless running. */
export async function seedTask(
  database: Database,
  task: { id: string; at: number; chunks?: number; running?: boolean },
): Promise<void> {
  const store = new KyselyAcmpTaskStore(database);
  const scope = { tenant: '', agent: 'agent:a' };
  await store.claim({
    taskId: task.id,
    scope,
    paramsHash: `sha256:${task.id}`,
    contextId: 'ctx',
    request: '{"m":1}',
    hostId: 'h',
    createdAt: task.at,
    deadlineAt: task.at + 30_000,
  });
  const chunks = Array.from({ length: task.chunks ?? 0 }, (_, i) => ({ type: 'text', data: `c${i}` }));
  if (chunks.length > 0) await store.appendChunks(task.id, { hostId: 'h', from: 0, chunks });
  if (!task.running) await store.finish(task.id, { outcome: RESULT, end: 'completed', at: task.at });
}

/** A provider-side escrow reservation of a task, in `state`. */
export async function seedReservation(
  database: Database,
  reservation: { escrowId: string; taskId: string; state: 'reserved' | 'settled' },
): Promise<void> {
  const store = new KyselyReservationStore(database);
  await store.reserve({
    escrowId: reservation.escrowId,
    taskId: reservation.taskId,
    amount: 5n,
    at: NOW - 60 * DAY,
  });
  if (reservation.state === 'settled')
    await store.update(reservation.escrowId, 'reserved', { state: 'settled' });
}

/** A negotiation session row in `phase`, last changed at `at`. */
export async function seedSession(
  database: Database,
  session: { id: string; phase: 'offer' | 'accepted' | 'expired' | 'canceled'; at: number },
): Promise<void> {
  const due = session.phase === 'offer' ? session.at : null;
  await sql`INSERT INTO acmp_sessions (session_id, tenant, agent, context_id, open_message_id, version, phase, due_at, created_at, updated_at, body)
    VALUES (${session.id}, '', 'agent:a', 'ctx', ${`m-${session.id}`}, 1, ${session.phase}, ${due}, ${session.at}, ${session.at}, '{}')`.execute(
    database.db,
  );
}

/** A task row of the SDK's store in `state`, last updated at `at`, with `configs` push configs. */
export async function seedSdkTask(
  database: Database,
  task: { id: string; state: string; at: number; configs?: number },
): Promise<void> {
  const { tasks, pushNotificationConfigs } = SDK_STORE_TABLES;
  await sql`INSERT INTO ${sql.table(tasks)} (tenant, owner, id, context_id, status_last_updated, status_state)
    VALUES ('', 'agent:a', ${task.id}, 'ctx', ${task.at}, ${task.state})`.execute(database.db);
  for (let i = 0; i < (task.configs ?? 0); i++)
    await sql`INSERT INTO ${sql.table(pushNotificationConfigs)} (tenant, owner, task_id, config_id, config_data)
      VALUES ('', 'agent:a', ${task.id}, ${`cfg-${i}`}, '{}')`.execute(database.db);
}

/** The row count of every table (what "untouched" is checked against). */
export async function rowCounts(database: Database): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of await database.db.introspection.getTables()) {
    const { rows } = await sql<{
      n: number | string;
    }>`SELECT COUNT(*) AS n FROM ${sql.table(table.name)}`.execute(database.db);
    counts[table.name] = Number(rows[0]?.n ?? 0);
  }
  return counts;
}

/** The counts of a prune as `kind → rows`. */
export function byKind(counts: readonly PruneCount[]): Record<string, number> {
  return Object.fromEntries(counts.map((c) => [c.kind, c.rows]));
}

/** Reads one task row's retention columns. */
export async function taskRow(
  database: Database,
  id: string,
): Promise<{ state: string; request: string; outcome: string | null; pruned_at: unknown } | undefined> {
  const { rows } = await sql<{ state: string; request: string; outcome: string | null; pruned_at: unknown }>`
    SELECT state, request, outcome, pruned_at FROM acmp_tasks WHERE task_id = ${id}`.execute(database.db);
  return rows[0];
}

/**
 * Many finished tasks at once (a multi-row INSERT per 200), each with `chunks` chunks, finished at `at`:
 * the backlog a pruner works through while the host serves.
 */
export async function seedFinishedTasks(
  database: Database,
  batch: { prefix: string; count: number; chunks: number; at: number },
): Promise<void> {
  const outcome = JSON.stringify(RESULT);
  for (let from = 0; from < batch.count; from += 200) {
    const ids = Array.from(
      { length: Math.min(200, batch.count - from) },
      (_, i) => `${batch.prefix}-${from + i}`,
    );
    await sql`INSERT INTO acmp_tasks (task_id, tenant, agent, params_hash, context_id, request, host_id, state, created_at, deadline_at, updated_at, chunk_count, outcome, end_state, finished_at)
      VALUES ${sql.join(
        ids.map(
          (id) =>
            sql`(${id}, '', 'agent:a', ${`sha256:${id}`}, 'ctx', '{}', 'h', 'finished', ${batch.at}, ${batch.at}, ${batch.at}, ${batch.chunks}, ${outcome}, 'completed', ${batch.at})`,
        ),
      )}`.execute(database.db);
    if (batch.chunks === 0) continue;
    const chunks = ids.flatMap((id) =>
      Array.from({ length: batch.chunks }, (_, seq) => sql`(${id}, ${seq}, '{"type":"text","data":"c"}')`),
    );
    await sql`INSERT INTO acmp_task_chunks (task_id, seq, chunk) VALUES ${sql.join(chunks)}`.execute(
      database.db,
    );
  }
}

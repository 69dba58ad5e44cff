import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { PUSH_NOTIFICATION_TABLE, TASK_TABLE } from '@a2a-js/sdk/server/database';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, tempDir } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { openDatabase, type Database } from '../../src/storage/sql/database.js';
import { pendingMigrations } from '../../src/storage/sql/database-check.js';
import { migrateSets } from '../../src/storage/sql/migrations.js';
import { sdkIdMigrations, sdkStoreMigrations } from '../../src/storage/a2a/sdk-store-migrations.js';

afterEach(cleanup);

const SETS = sdkStoreMigrations({ tasks: TASK_TABLE, pushNotificationConfigs: PUSH_NOTIFICATION_TABLE });

/** The SDK's `a2a-db` bin, as its package.json declares it (the package exports do not list the file). */
function sdkCli(): string {
  const root = join(dirname(createRequire(import.meta.url).resolve('@a2a-js/sdk')), '..');
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  const bin = manifest.bin['a2a-db'];
  if (bin === undefined) throw new Error('@a2a-js/sdk declares no a2a-db bin');
  return join(root, bin);
}

/** Runs the SDK's own `a2a-db upgrade` on the database at `url`, in a child process. */
async function sdkUpgrade(url: string): Promise<void> {
  await promisify(execFile)(process.execPath, [sdkCli(), 'upgrade', '--url', url], { timeout: 30_000 });
}

type Rows = Record<string, unknown>[];

/** SQLite: every table's columns (type, not null, default, key position), indexes and DDL; the ledgers. */
async function sqliteSchema(database: Database): Promise<Record<string, unknown>> {
  const raw = async (text: string): Promise<Rows> =>
    (await sql.raw<Record<string, unknown>>(text).execute(database.db)).rows;
  const objects = await raw(
    `SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name`,
  );
  const schema: Record<string, unknown> = { objects };
  for (const { name, type } of objects) {
    if (type !== 'table') continue;
    schema[`${String(name)}.columns`] = await raw(`PRAGMA table_xinfo("${String(name)}")`);
    const indexes = await raw(`PRAGMA index_list("${String(name)}")`);
    schema[`${String(name)}.indexes`] = await Promise.all(
      indexes.map(async (index) => ({
        ...index,
        columns: await raw(`PRAGMA index_info("${String(index.name)}")`),
      })),
    );
  }
  return { ...schema, ...(await ledgers(database)) };
}

/** PostgreSQL: columns (type, length, nullability, default, collation), key constraints, indexes; the ledgers. */
async function pgSchema(database: Database): Promise<Record<string, unknown>> {
  const raw = async (text: string): Promise<Rows> =>
    (await sql.raw<Record<string, unknown>>(text).execute(database.db)).rows;
  return {
    columns: await raw(`SELECT table_name, column_name, ordinal_position, data_type, character_maximum_length,
      is_nullable, column_default, collation_name FROM information_schema.columns
      WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`),
    keys: await raw(`SELECT tc.table_name, tc.constraint_name, tc.constraint_type, kcu.column_name, kcu.ordinal_position
      FROM information_schema.table_constraints tc JOIN information_schema.key_column_usage kcu
        ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema
      WHERE tc.table_schema = 'public' ORDER BY tc.table_name, tc.constraint_name, kcu.ordinal_position`),
    indexes: await raw(
      `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`,
    ),
    ...(await ledgers(database)),
  };
}

/** The migration names each SDK ledger records (their timestamps differ by nature). */
async function ledgers(database: Database): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const set of SETS) {
    const table = set.ledgerTable ?? '';
    out[table] = (
      await sql<{ name: string }>`SELECT name FROM ${sql.table(table)} ORDER BY name`.execute(database.db)
    ).rows;
  }
  return out;
}

const VARIANTS = [
  {
    name: 'SQLite',
    url: () => Promise.resolve(`sqlite:${join(tempDir('a2ac-sdk-schema-'), 'db.sqlite')}`),
    schema: sqliteSchema,
    pg: false,
  },
  { name: 'PostgreSQL', url: freshPgDatabase, schema: pgSchema, pg: true },
].filter((v) => !v.pg || process.env.TEST_PG_URL);

describe.each(VARIANTS)('the SDK stores migrated by us match the SDK on $name', ({ url, schema }) => {
  it("creates the tables, keys, indexes and ledgers the SDK's own a2a-db upgrade creates", async () => {
    const [theirs, ours] = [await url(), await url()];
    await sdkUpgrade(theirs);
    const sdkSide = openDatabase({ url: theirs, dataDir: tempDir() });
    const ourSide = openDatabase({ url: ours, dataDir: tempDir() });
    try {
      expect(await migrateSets(ourSide, SETS)).toEqual([
        'sdk:push-notification-configs/0001_create_push_notification_configs',
        'sdk:tasks/0001_create_tasks',
      ]);
      expect(await schema(ourSide)).toEqual(await schema(sdkSide));
    } finally {
      await sdkSide.close();
      await ourSide.close();
    }
  }, 60_000);

  it('takes a database the SDK migrated as up to date, and ours as up to date to the SDK', async () => {
    const [theirs, ours] = [await url(), await url()];
    await sdkUpgrade(theirs);
    const sdkSide = openDatabase({ url: theirs, dataDir: tempDir() });
    const ourSide = openDatabase({ url: ours, dataDir: tempDir() });
    try {
      expect(await pendingMigrations(ourSide, SETS)).toEqual([
        'sdk:push-notification-configs/0001_create_push_notification_configs',
        'sdk:tasks/0001_create_tasks',
      ]);
      expect(await pendingMigrations(sdkSide, SETS)).toEqual([]);
      expect(await migrateSets(sdkSide, SETS)).toEqual([]);
      await migrateSets(ourSide, SETS);
      const before = await schema(ourSide);
      await sdkUpgrade(ours);
      expect(await schema(ourSide)).toEqual(before);
    } finally {
      await sdkSide.close();
      await ourSide.close();
    }
  }, 60_000);
});

describe.skipIf(!process.env.TEST_PG_URL)('our widening of the SDK id columns on PostgreSQL', () => {
  it('widens varchar(36) ids to 128 characters in place, keeping the rows and the keys', async () => {
    const tables = { tasks: TASK_TABLE, pushNotificationConfigs: PUSH_NOTIFICATION_TABLE };
    const database = openDatabase({ url: await freshPgDatabase(), dataDir: tempDir() });
    try {
      await migrateSets(database, SETS);
      await sql`INSERT INTO ${sql.table(TASK_TABLE)} (tenant, owner, id, context_id, status_last_updated)
        VALUES ('', 'o', ${'t'.repeat(36)}, 'c', 1)`.execute(database.db);
      const long = 't'.repeat(128);
      const insertLong = sql`INSERT INTO ${sql.table(TASK_TABLE)} (tenant, owner, id, context_id, status_last_updated)
        VALUES ('', 'o', ${long}, ${long}, 2)`;
      await expect(insertLong.execute(database.db)).rejects.toThrow(/too long/);
      expect(await migrateSets(database, [sdkIdMigrations(tables)])).toEqual(['sdk_ids/0001_widen_ids']);
      await insertLong.execute(database.db);
      const lengths = await sql<{
        column_name: string;
        character_maximum_length: number;
        collation_name: string;
      }>`
        SELECT column_name, character_maximum_length, collation_name FROM information_schema.columns
        WHERE table_schema = 'public' AND column_name IN ('id', 'context_id', 'task_id', 'config_id')
          AND table_name IN (${TASK_TABLE}, ${PUSH_NOTIFICATION_TABLE}) ORDER BY table_name, column_name`.execute(
        database.db,
      );
      expect(lengths.rows.map((r) => [r.column_name, r.character_maximum_length, r.collation_name])).toEqual([
        ['config_id', 128, 'C'],
        ['task_id', 128, 'C'],
        ['context_id', 128, 'C'],
        ['id', 128, 'C'],
      ]);
      const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(TASK_TABLE)}`.execute(
        database.db,
      );
      expect(rows.rows[0]?.n).toBe(2);
    } finally {
      await database.close();
    }
  }, 60_000);
});

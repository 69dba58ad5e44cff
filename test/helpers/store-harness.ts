import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../src/storage/database.js';
import { migrateSets, type MigrationSet } from '../../src/storage/migrations.js';

/** A store under test on one backend: built per test, the backend set up once per suite. */
export interface StoreHarness<S> {
  store(): S;
  setup(): Promise<void>;
  teardown(): Promise<void>;
}

/**
 * The three backends of a store contract suite (STYLE.md "One storage contract suite runs against memory,
 * SQLite and PostgreSQL"): `memory`, a SQLite file, and a fresh PostgreSQL schema per run when
 * TEST_PG_URL is set (`undefined` otherwise, so the suite skips it).
 */
export function storeHarnesses<S>(options: {
  readonly memory: () => S;
  readonly kysely: (database: Database) => S;
  readonly migrations: readonly MigrationSet[];
}): [string, StoreHarness<S> | undefined][] {
  const pg = process.env.TEST_PG_URL;
  return [
    ['memory', { store: options.memory, setup: () => Promise.resolve(), teardown: () => Promise.resolve() }],
    ['sqlite', sqliteHarness(options)],
    ['postgres', pg ? postgresHarness(pg, options) : undefined],
  ];
}

function sqliteHarness<S>(options: {
  kysely: (database: Database) => S;
  migrations: readonly MigrationSet[];
}): StoreHarness<S> {
  let dir = '';
  let database: Database | undefined;
  return {
    store: () => options.kysely(database!),
    async setup() {
      dir = mkdtempSync(join(tmpdir(), 'a2ac-store-'));
      database = openDatabase({ url: `sqlite:${join(dir, 'db.sqlite')}`, dataDir: dir });
      await migrateSets(database, options.migrations);
    },
    async teardown() {
      await database?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh schema per run, so parallel runs never share a table. */
function postgresHarness<S>(
  baseUrl: string,
  options: { kysely: (database: Database) => S; migrations: readonly MigrationSet[] },
): StoreHarness<S> {
  const schema = `a2ac_store_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  let admin: Database | undefined;
  let database: Database | undefined;
  return {
    store: () => options.kysely(database!),
    async setup() {
      admin = openDatabase({ url: baseUrl, dataDir: tmpdir() });
      await admin.db.schema.createSchema(schema).execute();
      const url = new URL(baseUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      database = openDatabase({ url: url.toString(), dataDir: tmpdir() });
      await migrateSets(database, options.migrations);
    },
    async teardown() {
      await database?.close();
      await admin?.db.schema.dropSchema(schema).ifExists().cascade().execute();
      await admin?.close();
    },
  };
}

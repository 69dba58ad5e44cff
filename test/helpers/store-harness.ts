import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../src/storage/database.js';
import { migrateSets, type MigrationSet } from '../../src/storage/migrations.js';
import { createPgDatabase, type PgDatabase } from './pg.js';

/** A store under test on one backend: built per test, the backend set up once per suite. */
export interface StoreHarness<S> {
  store(): S;
  setup(): Promise<void>;
  teardown(): Promise<void>;
}

/**
 * The three backends of a store contract suite (STYLE.md "One storage contract suite runs against memory,
 * SQLite and PostgreSQL"): `memory`, a SQLite file, and a fresh PostgreSQL database per suite when
 * TEST_PG_URL is set (`undefined` otherwise, so the suite skips it).
 */
export function storeHarnesses<S>(options: {
  readonly memory: () => S;
  readonly kysely: (database: Database) => S;
  readonly migrations: readonly MigrationSet[];
}): [string, StoreHarness<S> | undefined][] {
  return [
    ['memory', { store: options.memory, setup: () => Promise.resolve(), teardown: () => Promise.resolve() }],
    ['sqlite', sqliteHarness(options)],
    ['postgres', process.env.TEST_PG_URL ? postgresHarness(options) : undefined],
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

/** A fresh database per suite (test/helpers/pg.ts), dropped at teardown. */
function postgresHarness<S>(options: {
  kysely: (database: Database) => S;
  migrations: readonly MigrationSet[];
}): StoreHarness<S> {
  let pgDatabase: PgDatabase | undefined;
  let database: Database | undefined;
  return {
    store: () => options.kysely(database!),
    async setup() {
      pgDatabase = await createPgDatabase();
      database = openDatabase({ url: pgDatabase.url, dataDir: tmpdir() });
      await migrateSets(database, options.migrations);
    },
    async teardown() {
      await database?.close();
      await pgDatabase?.drop();
    },
  };
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe } from 'vitest';
import { openDatabase, type Database } from '../../src/storage/sql/database.js';
import { migrateSets, type MigrationSet } from '../../src/storage/sql/migrations.js';
import { createPgDatabase, type PgDatabase } from './pg.js';

/** What a store may need opened before use and closed after (the Kysely stores' LISTEN connections). */
interface Lifecycle {
  open?(): Promise<void>;
  close?(): Promise<void>;
}

export type Backend = 'memory' | 'sqlite' | 'postgres';

/** What a contract case sees: the store of the running test, on empty tables. */
export interface StoreUnderTest<S> {
  readonly backend: Backend;
  /** The store of the running test (a new, opened instance per test; closed after it). */
  readonly store: S;
  /**
   * Another instance over the same tables on its own connection — what a restart or a second host sees;
   * `undefined` on memory, whose state lives in the instance. Closed after the test.
   */
  readonly reopen: (() => Promise<S>) | undefined;
}

/** The implementations a contract suite runs against. */
export interface StoreBackends<S> {
  readonly memory: () => S;
  /** The Kysely store over a database; several named variants each run on SQLite and PostgreSQL. */
  readonly kysely: ((database: Database) => S) | Readonly<Record<string, (database: Database) => S>>;
  readonly migrations: readonly MigrationSet[];
}

/** One backend: the database is made and migrated once per suite and emptied after every test. */
interface Harness<S> {
  readonly name: string;
  readonly backend: Backend;
  setup(): Promise<void>;
  store(): S;
  reopen: (() => S) | undefined;
  reset(): Promise<void>;
  teardown(): Promise<void>;
}

/**
 * The one shape of a store contract suite (STYLE.md "One storage contract suite runs against memory,
 * SQLite and PostgreSQL"): `cases` declares the `it`s once; they run on memory, on a SQLite file and —
 * when TEST_PG_URL is set — on a fresh PostgreSQL database (test/helpers/pg.ts), each test on empty
 * tables with a new store instance.
 */
export function storeContract<S extends object>(
  title: string,
  backends: StoreBackends<S>,
  cases: (t: StoreUnderTest<S>) => void,
): void {
  for (const harness of harnessesOf(backends)) {
    describe(`${title} on ${harness.name}`, () => {
      const opened: S[] = [];
      const open = async (make: () => S): Promise<S> => {
        const store = make();
        opened.push(store);
        await (store as Lifecycle).open?.();
        return store;
      };
      let current: S | undefined;
      const reopen = harness.reopen;
      const t: StoreUnderTest<S> = {
        backend: harness.backend,
        get store(): S {
          if (!current) throw new Error('the store exists inside a test only');
          return current;
        },
        reopen: reopen && (() => open(reopen)),
      };
      beforeAll(() => harness.setup());
      beforeEach(async () => {
        current = await open(() => harness.store());
      });
      afterEach(async () => {
        for (let store = opened.pop(); store; store = opened.pop()) await (store as Lifecycle).close?.();
        current = undefined;
        await harness.reset();
      });
      afterAll(() => harness.teardown());
      cases(t);
    });
  }
}

function harnessesOf<S>(backends: StoreBackends<S>): Harness<S>[] {
  const variants = typeof backends.kysely === 'function' ? { '': backends.kysely } : { ...backends.kysely };
  const kysely = Object.entries(variants).flatMap(([variant, make]) => {
    const label = (backend: string): string => (variant ? `${backend} (${variant})` : backend);
    const sqlite = sqliteHarness(label('SQLite'), make, backends.migrations);
    if (!process.env.TEST_PG_URL) return [sqlite];
    return [sqlite, postgresHarness(label('PostgreSQL'), make, backends.migrations)];
  });
  const memory: Harness<S> = {
    name: 'memory',
    backend: 'memory',
    setup: () => Promise.resolve(),
    store: backends.memory,
    reopen: undefined,
    reset: () => Promise.resolve(),
    teardown: () => Promise.resolve(),
  };
  return [memory, ...kysely];
}

/**
 * A Kysely harness over a URL made at setup: one connection for the tests' stores, another for each
 * reopened instance (closed at teardown).
 */
function kyselyHarness<S>(
  names: { name: string; backend: Backend },
  make: (database: Database) => S,
  migrations: readonly MigrationSet[],
  target: { create(): Promise<string>; destroy(): Promise<void> },
): Harness<S> {
  let database: Database | undefined;
  let url = '';
  const extra: Database[] = [];
  const connected = (): Database => {
    if (!database) throw new Error('the harness is not set up');
    return database;
  };
  return {
    ...names,
    async setup() {
      url = await target.create();
      database = openDatabase({ url, dataDir: tmpdir() });
      await migrateSets(database, migrations);
    },
    store: () => make(connected()),
    reopen() {
      const another = openDatabase({ url, dataDir: tmpdir() });
      extra.push(another);
      return make(another);
    },
    reset: () => emptyTables(connected()),
    async teardown() {
      for (const d of extra.splice(0)) await d.close();
      await database?.close();
      await target.destroy();
    },
  };
}

function sqliteHarness<S>(
  name: string,
  make: (database: Database) => S,
  migrations: readonly MigrationSet[],
): Harness<S> {
  let dir = '';
  return kyselyHarness({ name, backend: 'sqlite' }, make, migrations, {
    create() {
      dir = mkdtempSync(join(tmpdir(), 'a2ac-store-'));
      return Promise.resolve(`sqlite:${join(dir, 'store.sqlite')}`);
    },
    destroy() {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  });
}

function postgresHarness<S>(
  name: string,
  make: (database: Database) => S,
  migrations: readonly MigrationSet[],
): Harness<S> {
  let pg: PgDatabase | undefined;
  return kyselyHarness({ name, backend: 'postgres' }, make, migrations, {
    async create() {
      pg = await createPgDatabase();
      return pg.url;
    },
    destroy: async () => pg?.drop(),
  });
}

/** Deletes every row of every table but the migrators' own, so the next test starts from nothing. */
async function emptyTables(database: Database): Promise<void> {
  const keep = (table: string): boolean => /^a2ac_.*migrations(_lock)?$/.test(table);
  if (database.dialect === 'postgres') {
    const { rows } = await sql<{ name: string }>`
      SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()`.execute(database.db);
    const tables = rows.map((r) => r.name).filter((t) => !keep(t));
    if (tables.length > 0)
      await sql
        .raw(`TRUNCATE TABLE ${tables.map((t) => `"${t}"`).join(', ')} RESTART IDENTITY CASCADE`)
        .execute(database.db);
    return;
  }
  const { rows } = await sql<{ name: string }>`
    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`.execute(database.db);
  await sql`PRAGMA foreign_keys = OFF`.execute(database.db);
  for (const { name } of rows.filter((r) => !keep(r.name)))
    await sql.raw(`DELETE FROM "${name}"`).execute(database.db);
  await sql`PRAGMA foreign_keys = ON`.execute(database.db);
}

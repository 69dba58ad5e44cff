import pg from 'pg';
import { onCleanup } from './cleanup.js';

/**
 * PostgreSQL isolation for tests: the one way is a fresh **database** on the server named by TEST_PG_URL
 * (not a fresh schema). A database is named by a plain URL, so hosts started in another process (`serve`,
 * `migrate`, the README walk-through) connect to it like any client; it isolates what a schema does not
 * (LISTEN/NOTIFY channels, migration lock tables, `search_path` left to the client) and drops in one
 * statement.
 *
 * Every database made here is dropped after its test file at the latest: {@link dropPgDatabases} runs in
 * the file's `afterAll` (test/helpers/setup.ts, a vitest setup file), whatever the tests did.
 */

/** Databases made by this test file and not dropped yet. */
const live = new Set<string>();

/** A fresh, empty database: its URL, and `drop()` (idempotent, forcing open connections off). */
export interface PgDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

function baseUrl(): string {
  const base = process.env.TEST_PG_URL;
  if (!base) throw new Error('TEST_PG_URL is not set');
  return base;
}

async function admin<T>(query: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: baseUrl() });
  await client.connect();
  try {
    return await query(client);
  } finally {
    await client.end();
  }
}

async function dropDatabase(name: string): Promise<void> {
  if (!live.delete(name)) return;
  await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/**
 * Creates a fresh database; the caller drops it (a suite's `afterAll`, a harness's teardown), and the
 * file's `afterAll` drops it if the caller did not.
 */
export async function createPgDatabase(): Promise<PgDatabase> {
  const name = `a2ac_test_${process.pid}_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  live.add(name);
  const url = new URL(baseUrl());
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => dropDatabase(name) };
}

/** A fresh database for one test, dropped by the test's {@link cleanup} (afterEach); returns its URL. */
export async function freshPgDatabase(): Promise<string> {
  const database = await createPgDatabase();
  onCleanup(() => database.drop());
  return database.url;
}

/** Drops every database this file made and has not dropped (the setup file's `afterAll`). */
export async function dropPgDatabases(): Promise<void> {
  for (const name of [...live]) await dropDatabase(name);
}

/** How many databases this file made and has not dropped yet (for the helper's own test). */
export function livePgDatabases(): number {
  return live.size;
}

import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../helpers/cleanup.js';
import { createPgDatabase, freshPgDatabase, livePgDatabases } from '../helpers/pg.js';

afterEach(cleanup);

async function exists(url: string): Promise<boolean> {
  const name = new URL(url).pathname.slice(1);
  const client = new pg.Client({ connectionString: process.env.TEST_PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return rows.length === 1;
  } finally {
    await client.end();
  }
}

describe.skipIf(!process.env.TEST_PG_URL)('test/helpers/pg.ts: a fresh database per use', () => {
  it('gives an empty database reachable by its URL, dropped by the test cleanup', async () => {
    const url = await freshPgDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'`,
    );
    await client.end();
    expect(rows[0]?.n).toBe('0');
    await cleanup();
    expect(await exists(url)).toBe(false);
  });

  it('drops a database with connections still open, once', async () => {
    const database = await createPgDatabase();
    const holder = new pg.Client({ connectionString: database.url });
    holder.on('error', () => {});
    await holder.connect();
    await database.drop();
    await database.drop();
    expect(await exists(database.url)).toBe(false);
    await holder.end().catch(() => {});
  });

  it('keeps a database a test did not drop for the setup file to drop after the file', async () => {
    const before = livePgDatabases();
    const database = await createPgDatabase();
    expect(livePgDatabases()).toBe(before + 1);
    expect(await exists(database.url)).toBe(true);
  });
});

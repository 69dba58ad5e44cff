import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';

describe.skipIf(!process.env.TEST_PG_URL)('openDatabase on PostgreSQL', () => {
  it('survives the server dropping an idle pooled connection, reports it, and reconnects', async () => {
    let lost: (error: Error) => void = () => {};
    const reported = new Promise<Error>((resolve) => (lost = resolve));
    const database = openDatabase({
      url: process.env.TEST_PG_URL!,
      dataDir: '.',
      onIdleError: (error) => lost(error),
    });
    try {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(database.db);
      const admin = new pg.Client({ connectionString: process.env.TEST_PG_URL });
      await admin.connect();
      await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
      await admin.end();
      expect((await reported).message).toMatch(/terminat/);
      const again = await sql<{ one: number }>`select 1 as one`.execute(database.db);
      expect(again.rows[0]?.one).toBe(1);
    } finally {
      await database.close();
    }
  });

  it('survives the server dropping a connection that is checked out (inside a transaction), without an uncaught error', async () => {
    const database = openDatabase({ url: process.env.TEST_PG_URL!, dataDir: '.' });
    try {
      // pg-pool takes its error listener off a client while it is checked out: an unheard 'error' there
      // was an uncaught exception that ended the process (seen in test/host/health.test.ts).
      const failed = database.db.connection().execute(async (conn) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(conn);
        const admin = new pg.Client({ connectionString: process.env.TEST_PG_URL });
        await admin.connect();
        await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
        await admin.end();
        // Idle on the checked-out connection until the server's termination has reached this process.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await sql`select 1`.execute(conn);
      });
      await expect(failed).rejects.toThrow(/not queryable|terminat/i);
      const again = await sql<{ one: number }>`select 1 as one`.execute(database.db);
      expect(again.rows[0]?.one).toBe(1);
    } finally {
      await database.close();
    }
  });
});

import pg from 'pg';
import { onCleanup } from './host.js';

/**
 * A fresh PostgreSQL database on the server named by TEST_PG_URL, dropped after the test. Each test gets
 * its own, so suites can run in parallel and leave nothing behind.
 */
export async function freshPgDatabase(): Promise<string> {
  const base = process.env.TEST_PG_URL;
  if (!base) throw new Error('TEST_PG_URL is not set');
  const name = `a2ac_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  onCleanup(async () => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

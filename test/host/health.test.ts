import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { LISTEN_APPLICATION_NAME } from '../../src/storage/sql/pg-listener.js';
import { cleanup, onCleanup, startTestHost } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';

afterEach(cleanup);

/** Probes and what they answer (docs/operations.md "Health, readiness and shutdown"). */

const ALICE = 'alice-secret-0123456789abcdef';

async function probe(url: string, path: '/healthz' | '/readyz'): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, body: await res.json() };
}

const READY = { status: 'ready', checks: { database: 'ok', listen: 'none', draining: 'no' } };
const ACMP = () => [acmpModule({ capabilities: demoCapabilities({ stepMs: 1 }) })];

describe('GET /healthz and GET /readyz', () => {
  it('answer 200 on SQLite, without the token every RPC needs', async () => {
    const host = await startTestHost({ flags: { token: [`alice=${ALICE}`] }, modules: ACMP() });
    expect(await probe(host.url, '/healthz')).toEqual({ status: 200, body: { status: 'serving' } });
    expect(await probe(host.url, '/readyz')).toEqual({ status: 200, body: READY });
  });

  it('answer 200 on memory stores', async () => {
    const host = await startTestHost({ flags: { db: 'memory' }, modules: ACMP() });
    expect(await probe(host.url, '/readyz')).toEqual({ status: 200, body: READY });
  });

  it('answers 503 not_migrated once a migration ledger is gone, and /healthz stays 200', async () => {
    const host = await startTestHost({ modules: ACMP() });
    await sql`DROP TABLE a2ac_acmp_migrations`.execute(host.database!.db);
    await vi.waitFor(
      async () =>
        expect(await probe(host.url, '/readyz')).toEqual({
          status: 503,
          body: { status: 'not_ready', checks: { database: 'not_migrated', listen: 'none', draining: 'no' } },
        }),
      { timeout: 10_000, interval: 100 },
    );
    expect((await probe(host.url, '/healthz')).status).toBe(200);
  });
});

const PG = process.env.TEST_PG_URL;

/** A superuser connection to the server's default database (not the host's). */
async function admin(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG });
  await client.connect();
  onCleanup(() => client.end());
  return client;
}

describe.skipIf(!PG)('on PostgreSQL', () => {
  it('answers 200 with every LISTEN connection up', async () => {
    const db = await freshPgDatabase();
    const host = await startTestHost({ flags: { db }, migrate: true, modules: ACMP() });
    expect(await probe(host.url, '/readyz')).toEqual({
      status: 200,
      body: { status: 'ready', checks: { database: 'ok', listen: 'ok', draining: 'no' } },
    });
  });

  it('answers 503 listen down while the LISTEN connection is lost, and 200 once it reconnected', async () => {
    const db = await freshPgDatabase();
    const name = new URL(db).pathname.slice(1);
    const host = await startTestHost({ flags: { db }, migrate: true, modules: ACMP() });
    expect((await probe(host.url, '/readyz')).status).toBe(200);
    const client = await admin();
    // New connections are refused, so the listener cannot come back until the test lets it.
    await client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    onCleanup(() => client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).then(() => undefined));
    const killed = await client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
      [name, LISTEN_APPLICATION_NAME],
    );
    expect(killed.rowCount).toBeGreaterThan(0);
    await vi.waitFor(
      async () => {
        const { status, body } = await probe(host.url, '/readyz');
        expect(status).toBe(503);
        expect(body).toMatchObject({ status: 'not_ready', checks: { listen: 'down', draining: 'no' } });
      },
      { timeout: 10_000, interval: 50 },
    );
    await client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    await vi.waitFor(
      async () =>
        expect(await probe(host.url, '/readyz')).toEqual({
          status: 200,
          body: { status: 'ready', checks: { database: 'ok', listen: 'ok', draining: 'no' } },
        }),
      { timeout: 20_000, interval: 100 },
    );
  });

  it('answers 503 database unreachable when no connection can be had, without naming the URL', async () => {
    const db = await freshPgDatabase();
    const name = new URL(db).pathname.slice(1);
    const host = await startTestHost({ flags: { db }, migrate: true, modules: ACMP() });
    const client = await admin();
    await client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    onCleanup(() => client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).then(() => undefined));
    await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    await vi.waitFor(
      async () => {
        const res = await fetch(`${host.url}/readyz`);
        const text = await res.text();
        expect(res.status).toBe(503);
        expect(JSON.parse(text)).toEqual({
          status: 'not_ready',
          checks: { database: 'unreachable', listen: 'down', draining: 'no' },
        });
        expect(text).not.toContain(name);
      },
      { timeout: 10_000, interval: 100 },
    );
  });
});

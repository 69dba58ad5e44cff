import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { closedPort, runCliProcess, startServeProcess } from '../helpers/cli-process.js';
import { cleanup, onCleanup, tempDir } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';

afterEach(cleanup);

/** A data directory path inside a fresh temporary directory, not created yet. */
function unborn(): string {
  return join(tempDir(), 'data');
}

const PLAIN = ['--no-tls', '--no-personal-data', '--port', '0'];

describe('serve checks its database before it says "listening"', () => {
  it('refuses a PostgreSQL port where nothing listens, naming the cause and the fix, and creates nothing', async () => {
    const dataDir = unborn();
    const url = `postgres://postgres@127.0.0.1:${await closedPort()}/agents`;
    const run = await runCliProcess(['serve', '--data-dir', dataDir, '--db', url, '--port', '0']);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toMatch(/listening/);
    expect(run.stderr).toMatch(/DATABASE_UNAVAILABLE/);
    expect(run.stderr).toMatch(/ECONNREFUSED/);
    expect(run.stderr).toMatch(/nothing listens at 127\.0\.0\.1:\d+/);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('refuses an empty postgres:// URL before connecting', async () => {
    const run = await runCliProcess(['serve', '--db', 'postgres://', ...PLAIN, '--data-dir', unborn()]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/names no database: write postgres:\/\/user@host:5432\/dbname/);
  });

  it('reads a --db without a scheme as a mistake and says how to write a SQLite file', async () => {
    const run = await runCliProcess(['serve', '--db', 'foo.sqlite', ...PLAIN, '--data-dir', unborn()]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/"foo\.sqlite" has no scheme: write sqlite:foo\.sqlite/);
  });

  it('names the SQLite file it cannot open', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'not-a-dir'), 'x');
    const file = join(dir, 'not-a-dir', 'agent.sqlite');
    const run = await runCliProcess(['serve', '--db', `sqlite:${file}`, ...PLAIN]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`cannot open the SQLite database ${file}`);
    expect(run.stderr).toMatch(/EEXIST|ENOTDIR/);
  });
});

describe.skipIf(!process.env.TEST_PG_URL)('serve and migrate against PostgreSQL', () => {
  it('refuses a database that does not exist (3D000), saying how to create it', async () => {
    const base = new URL(process.env.TEST_PG_URL!);
    base.pathname = '/a2ac_no_such_database';
    const dataDir = unborn();
    const run = await runCliProcess(['serve', '--db', base.toString(), '--data-dir', dataDir, '--port', '0']);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toMatch(/listening/);
    expect(run.stderr).toMatch(/database "a2ac_no_such_database" does not exist \(3D000\)/);
    expect(run.stderr).toMatch(/createdb .*a2ac_no_such_database/);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('refuses an un-migrated database with the exact migrate command, which then works', async () => {
    const url = await freshPgDatabase();
    const refused = await runCliProcess(['serve', '--db', url, ...PLAIN, '--data-dir', unborn()]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/DATABASE_NOT_MIGRATED/);
    const command = /Run: a2a-commerce (migrate --db '([^']+)')/.exec(refused.stderr);
    expect(command?.[2]).toBe(url);
    const migrated = await runCliProcess(['migrate', '--db', command![2]!]);
    expect(migrated.code).toBe(0);
    const host = await startServeProcess(['--db', url, ...PLAIN, '--data-dir', unborn()]);
    expect((await fetch(`${host.url}/.well-known/agent-card.json`)).status).toBe(200);
    expect((await host.stop()).code).toBe(0);
  });

  it('refuses a database missing only the newest migrations and lists them', async () => {
    const url = await freshPgDatabase();
    expect((await runCliProcess(['migrate', '--db', url])).code).toBe(0);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      `DELETE FROM a2ac_acp_migrations WHERE name = (SELECT max(name) FROM a2ac_acp_migrations)`,
    );
    await client.end();
    const run = await runCliProcess(['serve', '--db', url, ...PLAIN, '--data-dir', unborn()]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/1 pending: acp\/\d{4}_/);
  });

  it('migrate prints the cause of a missing database and of a wrong user', async () => {
    const missing = new URL(process.env.TEST_PG_URL!);
    missing.pathname = '/a2ac_no_such_database';
    const run = await runCliProcess(['migrate', '--db', missing.toString()]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/does not exist \(3D000\)/);
    const stranger = new URL(process.env.TEST_PG_URL!);
    stranger.username = 'a2ac_no_such_role';
    const refused = await runCliProcess(['migrate', '--db', stranger.toString()]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/a2ac_no_such_role.*\(28/);
    expect(refused.stderr).toMatch(/fix the user name or password/);
  });
});

describe('migrate names the cause', () => {
  it('of a closed port', async () => {
    const run = await runCliProcess([
      'migrate',
      '--db',
      `postgres://postgres@127.0.0.1:${await closedPort()}/agents`,
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/ECONNREFUSED/);
    expect(run.stderr).not.toMatch(/SDK store migration failed$/m);
  });
});

describe('a failed start leaves nothing behind', () => {
  it('on a port in use: says so, and removes the SQLite file and certificate it would have made', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const port = String((busy.address() as { port: number }).port);
    const dataDir = unborn();
    const run = await runCliProcess(['serve', '--data-dir', dataDir, '--port', port]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/EADDRINUSE/);
    expect(run.stderr).toMatch(/choose another --port/);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('on a bad PEM: names the file and the flag', async () => {
    const dir = tempDir();
    const cert = join(dir, 'cert.pem');
    writeFileSync(cert, 'not a certificate');
    const dataDir = unborn();
    const run = await runCliProcess([
      'serve',
      '--tls-cert',
      cert,
      '--tls-key',
      join(dir, 'missing.key'),
      '--data-dir',
      dataDir,
      '--port',
      '0',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `cannot read the TLS private key (--tls-key) ${join(dir, 'missing.key')} (ENOENT)`,
    );
    writeFileSync(join(dir, 'key.pem'), 'not a key');
    const bad = await runCliProcess([
      'serve',
      '--tls-cert',
      cert,
      '--tls-key',
      join(dir, 'key.pem'),
      '--data-dir',
      dataDir,
      '--port',
      '0',
    ]);
    expect(bad.stderr).toContain(`--tls-cert ${cert} is not a PEM certificate`);
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe('data on disk is private', () => {
  it('creates the data directory 0700 and the database 0600', async () => {
    const dataDir = unborn();
    const host = await startServeProcess(['--data-dir', dataDir, '--port', '0']);
    await host.stop();
    const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);
    expect(mode(dataDir)).toBe('700');
    expect(mode(join(dataDir, 'tls'))).toBe('700');
    for (const name of readdirSync(dataDir).filter((n) => n.startsWith('a2a-commerce.sqlite'))) {
      expect([name, mode(join(dataDir, name))]).toEqual([name, '600']);
    }
    expect(mode(join(dataDir, 'tls', 'localhost.key'))).toBe('600');
  });
});

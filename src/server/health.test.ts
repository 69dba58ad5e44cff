import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../storage/sql/database.js';
import { migrateSets, type MigrationSet } from '../storage/sql/migrations.js';
import { Readiness } from './health.js';

const SET: MigrationSet = {
  id: 'health_test',
  migrations: { '0001_t': { up: async (db) => void (await sql`CREATE TABLE t (x integer)`.execute(db)) } },
};

const open: Database[] = [];
afterEach(async () => {
  for (const database of open.splice(0)) await database.close();
});

async function migrated(): Promise<Database> {
  const database = openDatabase({ url: 'sqlite::memory:', dataDir: '.' });
  open.push(database);
  await migrateSets(database, [SET]);
  return database;
}

describe('Readiness', () => {
  it('checks the database at most once per refresh interval, however often it is asked', async () => {
    const database = await migrated();
    const clock = { at: 0, now: () => clock.at };
    const readiness = new Readiness({ database, migrations: [SET], clock, refreshMs: 1000 });
    expect((await readiness.report()).checks.database).toBe('ok');
    await sql`DROP TABLE a2ac_health_test_migrations`.execute(database.db);
    clock.at = 999;
    // Within the interval the cached result answers: no statement ran.
    expect((await readiness.report()).checks.database).toBe('ok');
    clock.at = 1000;
    expect(await readiness.report()).toEqual({
      status: 'not_ready',
      checks: { database: 'not_migrated', listen: 'none', draining: 'no' },
    });
  });

  it('reports a migration this build has and the ledger lacks as not_migrated', async () => {
    const database = await migrated();
    const newer: MigrationSet = {
      ...SET,
      migrations: { ...SET.migrations, '0002_u': SET.migrations['0001_t']! },
    };
    const readiness = new Readiness({ database, migrations: [newer], clock: { now: () => 0 } });
    expect((await readiness.report()).checks.database).toBe('not_migrated');
  });

  it('tells followers once when draining turns it not ready, and stays so', async () => {
    const readiness = new Readiness({ database: undefined, migrations: [], clock: { now: () => 0 } });
    const seen: boolean[] = [];
    readiness.onChange((ready) => seen.push(ready));
    expect(await readiness.ready()).toBe(true);
    readiness.startDraining();
    readiness.startDraining();
    expect(seen).toEqual([false]);
    expect(await readiness.report()).toEqual({
      status: 'not_ready',
      checks: { database: 'ok', listen: 'none', draining: 'yes' },
    });
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { Overview } from '../src/server/console/overview-reads.js';
import type { ConsoleTaskRow } from '../src/server/console/task-reads.js';
import { KyselyEscrowStore } from '../src/storage/escrow/escrow-store-kysely.js';
import { cleanup } from './helpers/host.js';
import {
  consoleBuyer,
  oneInvoke,
  OPERATOR,
  startConsoleHost,
  type ConsoleHost,
} from './helpers/console-workload.js';
import { freshPgDatabase } from './helpers/pg.js';

afterEach(cleanup);

/** A GET of host's console API as the operator. */
async function api<T>(host: ConsoleHost, path: string): Promise<T> {
  const res = await host.fetch(`${host.url}/console/api${path}`, {
    headers: { authorization: `Bearer ${OPERATOR.secret}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

/** docs/console.md "One cluster, one picture": the console reads the database, not its own process. */
describe.skipIf(!process.env.TEST_PG_URL)('the console of a cluster sharing PostgreSQL', () => {
  it('shows on host A the task executed by host B, and both hosts alive', async () => {
    const db = await freshPgDatabase();
    const a = await startConsoleHost({ db, migrate: true });
    const b = await startConsoleHost({ db });
    await new KyselyEscrowStore(a.database!).credit('', 'agent:buyer', 10_000_000_000n);
    const onA = await oneInvoke(await consoleBuyer(a));
    const onB = await oneInvoke(await consoleBuyer(b));
    const { tasks } = await api<{ tasks: ConsoleTaskRow[] }>(a, '/tasks');
    const hostOf = (id: string) => tasks.find((t) => t.taskId === id)?.hostId;
    expect(hostOf(onB)).toBeDefined();
    expect(hostOf(onB)).not.toBe(hostOf(onA));
    expect((await api<{ task: ConsoleTaskRow }>(a, `/tasks/${onB}`)).task.state).toBe('completed');
    const overview = await api<Overview>(a, '/overview');
    expect(overview.counts.tasks).toBe(2);
    expect(overview.hosts.map((h) => h.hostId).sort()).toEqual([hostOf(onA), hostOf(onB)].sort());
    expect(overview.hosts.every((h) => h.alive)).toBe(true);
    // The same picture from host B.
    expect((await api<Overview>(b, '/overview')).counts.tasks).toBe(2);
  });
});

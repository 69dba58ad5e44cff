import type { Database } from '../../storage/sql/database.js';
import { num, type ConsoleTables } from './tables.js';
import { taskActivity, type TaskActivity } from './task-reads.js';

/**
 * A host counts as alive when it beat within this window: the ACMP liveness window at the default 5 s
 * heartbeat (two intervals, src/acmp/provider/provider.ts), after which its running tasks are reaped.
 */
const HOST_ALIVE_WINDOW_MS = 10_000;

/** A host of the cluster (one row per host sharing the database, src/acmp/provider/host-liveness.ts). */
export interface ConsoleHost {
  readonly hostId: string;
  readonly startedAt: number;
  readonly aliveAt: number;
  readonly alive: boolean;
}

/** The overview page (docs/console.md "GET /console/api/overview"). */
export interface Overview {
  readonly now: number;
  readonly store: string;
  readonly hosts: ConsoleHost[];
  readonly activity: TaskActivity | undefined;
  /** Over the last hour: invokes, invokes per second (last minute), CU billed, errors. */
  readonly lastHour: { invokes: number; perSecond: number; cuBilled: number; errors: number };
  readonly counts: Record<string, number>;
}

/** What the overview counts, table by table (a table the cluster does not have counts nothing). */
const COUNTED: readonly { name: string; table: string; where?: string }[] = [
  { name: 'tasks', table: 'acmp_tasks' },
  { name: 'escrows', table: 'escrows' },
  { name: 'sessions', table: 'acmp_sessions' },
  { name: 'agreements', table: 'acmp_agreements' },
  { name: 'transactions', table: 'acp_transactions' },
];

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

/** The overview of every host on the database. */
export async function readOverview(
  database: Database,
  tables: ConsoleTables,
  now: number,
): Promise<Overview> {
  const hosts = (await tables.has('acmp_hosts', now))
    ? ((await database.db
        .selectFrom('acmp_hosts')
        .select(['host_id', 'started_at', 'alive_at'])
        .orderBy('host_id')
        .execute()) as Record<string, unknown>[])
    : [];
  const activity = (await tables.has('acmp_tasks', now)) ? await taskActivity(database, now) : undefined;
  const counts: Record<string, number> = {};
  for (const { name, table } of COUNTED) {
    if (!(await tables.has(table, now))) continue;
    const row = (await database.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst()) as { n: unknown } | undefined;
    counts[name] = num(row?.n);
  }
  return {
    now,
    store: database.dialect,
    hosts: hosts.map((h) => ({
      hostId: String(h.host_id),
      startedAt: num(h.started_at),
      aliveAt: num(h.alive_at),
      alive: now - num(h.alive_at) <= HOST_ALIVE_WINDOW_MS,
    })),
    activity,
    lastHour: {
      invokes: sum(activity?.invokes ?? []),
      perSecond: (activity?.lastMinute ?? 0) / 60,
      cuBilled: sum(activity?.cu ?? []),
      errors: sum(activity?.errors ?? []),
    },
    counts,
  };
}

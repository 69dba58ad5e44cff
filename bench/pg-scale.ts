import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startCliHost, type CliHost } from './cli-host.js';
import { PgCounters, STATS_SETTLE_MS, type PgPerOp } from './pg-counters.js';
import { freshPg } from './pg-procs.js';
import { LoadGen, type Measured } from './procs.js';
import type { Scenario, SteadySpec } from './protocol.js';
import { fmt } from './stats.js';

/**
 * `tsx bench/pg-scale.ts [--pg URL] [--hosts 1,2,3] [--concurrency 16] [--seconds 10] [--quick]`: how much
 * one PostgreSQL primary sustains with 1, 2 and 3 hosts (`serve` child processes on one fresh database
 * each round) driven at once, each by its own load generator: ACMP invokes (the demo `sentiment-analysis`,
 * non-streamed, A2A JSON-RPC) and ACPspec envelopes (HTTPS, 20-envelope transactions). Per operation:
 * commits, WAL bytes, statements (with pg_stat_statements), rows by table and PostgreSQL CPU.
 */
const { values: flags } = parseArgs({
  options: {
    pg: { type: 'string' },
    hosts: { type: 'string', default: '1,2,3' },
    concurrency: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '10' },
    quick: { type: 'boolean', default: false },
  },
});
const base = flags.pg ?? process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const quick = flags.quick ?? false;
const concurrency = Number(flags.concurrency);
const steady: SteadySpec | undefined = quick
  ? undefined
  : {
      windowMs: 1000,
      tolerance: 0.05,
      maxWarmupMs: 20_000,
      minMs: Number(flags.seconds) * 1000,
      minCount: 1,
      maxMs: Number(flags.seconds) * 3000,
    };
const log = (line: string): void => void process.stdout.write(`${line}\n`);
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

const WORKLOADS: { name: string; unit: string; scenario: Scenario }[] = [
  {
    name: 'ACMP invoke',
    unit: 'invokes',
    scenario: {
      kind: 'acmp-invoke',
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'good results, strong growth' },
    },
  },
  { name: 'ACPspec envelope over HTTPS', unit: 'envelopes', scenario: { kind: 'acp-https' } },
];

interface Round {
  hosts: number;
  workload: string;
  opsPerSec: number;
  perHost: number[];
  hostCpuUs: number;
  pg: PgPerOp;
  loadAverage: string;
}

/** Starts `n` hosts on one database: the first migrates it, the others start once it is done. */
async function startHosts(n: number, url: string): Promise<CliHost[]> {
  const first = await startCliHost({ args: ['--db', url, '--migrate'] });
  const rest = await Promise.allSettled(
    Array.from({ length: n - 1 }, () => startCliHost({ args: ['--db', url] })),
  );
  const hosts = [first, ...rest.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))];
  const failed = rest.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(hosts.map((h) => h.close()));
    throw failed.reason;
  }
  return hosts;
}

/** One workload on every host at once: warm up together, read the counters, measure together, read again. */
async function round(
  hosts: CliHost[],
  gens: LoadGen[],
  counters: PgCounters,
  workload: (typeof WORKLOADS)[number],
) {
  const spec = {
    scenario: workload.scenario,
    concurrency,
    warmup: quick ? 20 : 0,
    count: quick ? 100 : 0,
    steady,
  };
  const phases = await Promise.all(hosts.map((h, i) => gens[i]!.warm(h, spec)));
  await sleep(STATS_SETTLE_MS);
  const before = await counters.read();
  const measured: Measured[] = await Promise.all(phases.map((go) => go()));
  await sleep(STATS_SETTLE_MS);
  const after = await counters.read();
  const ops = measured.reduce((sum, m) => sum + m.load.count, 0);
  const perHost = measured.map((m) => m.load.count / (m.load.elapsedMs / 1000));
  const result: Round = {
    hosts: hosts.length,
    workload: workload.name,
    opsPerSec: perHost.reduce((a, b) => a + b, 0),
    perHost,
    hostCpuUs: measured.reduce((sum, m) => sum + m.serverCpuUs, 0) / ops,
    pg: await counters.perOp(before, after, ops),
    loadAverage: load(),
  };
  return result;
}

function describe(r: Round, statements: boolean): string {
  const tables = Object.entries(r.pg.tables)
    .map(
      ([t, d]) =>
        `${t} ${[d.ins && `+${fmt(d.ins)}`, d.upd && `~${fmt(d.upd)}`, d.del && `-${fmt(d.del)}`, `scans ${fmt(d.scans)}`].filter(Boolean).join(' ')}`,
    )
    .join('; ');
  return `| ${r.hosts} | ${r.workload} | ${fmt(r.opsPerSec)} (${r.perHost.map(fmt).join(' + ')}) | ${fmt(r.hostCpuUs)} | ${fmt(r.pg.backendCpuUs)} | ${fmt(r.pg.commits)} | ${statements && r.pg.statements !== undefined ? fmt(r.pg.statements) : 'n/a'} | ${fmt(r.pg.walBytes)}${r.pg.walScope === 'cluster' ? ' (cluster)' : ''} | ${tables} | ${r.loadAverage} |`;
}

async function main(): Promise<void> {
  const counts = flags.hosts.split(',').map(Number);
  log(
    `# PostgreSQL scale (${quick ? 'quick: a check, not figures' : 'steady state'}), load average ${load()}\n`,
  );
  const rounds: Round[] = [];
  let statements = false;
  const gens = Array.from({ length: Math.max(...counts) }, () => new LoadGen());
  try {
    for (const n of counts) {
      const db = await freshPg(base, 'a2ac_scale');
      const counters = await PgCounters.open(base, db);
      statements = counters.hasStatements;
      let hosts: CliHost[] = [];
      try {
        hosts = await startHosts(n, db.url);
        for (const workload of WORKLOADS) {
          const r = await round(hosts, gens, counters, workload);
          rounds.push(r);
          log(
            `  ${n} host(s), ${workload.name}: ${fmt(r.opsPerSec)} ${workload.unit}/s, commits/op ${fmt(r.pg.commits)}, WAL ${fmt(r.pg.walBytes)} B/op, load ${r.loadAverage}`,
          );
        }
      } finally {
        await Promise.all(hosts.map((h) => h.close()));
        await counters.close();
        await db.drop();
      }
    }
  } finally {
    for (const g of gens) g.close();
  }
  const report = [
    `# PostgreSQL scale${quick ? ' (quick: a check, not figures)' : ''}`,
    '',
    `- concurrency per host: ${concurrency}; statements: ${statements ? 'pg_stat_statements' : "n/a (pg_stat_statements not preloaded: shared_preload_libraries = 'pg_stat_statements')"}`,
    `- WAL "(cluster)": pg_current_wal_lsn difference, every database of the server (shared servers inflate it)`,
    '',
    '| hosts | workload | ops/s total (per host) | host CPU µs/op | PostgreSQL CPU µs/op | commits/op | statements/op | WAL bytes/op | rows per op by table (+ins ~upd -del, scans) | load average |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rounds.map((r) => describe(r, statements)),
  ].join('\n');
  log(`\n${report}`);
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL(`pg-scale${quick ? '-quick' : ''}.md`, dir), `${report}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});

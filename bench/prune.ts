import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { hostPruner } from '../src/server/background-pruner.js';
import { resolveHostConfig } from '../src/server/config.js';
import { startHost, type RunningHost } from '../src/server/host.js';
import { acmpModule } from '../src/server/modules/acmp.js';
import { systemClock } from '../src/shared/clock.js';
import type { Database } from '../src/storage/sql/database.js';
import { LoadGen, type ServerProc } from './procs.js';
import { metricsOf } from './report.js';
import { fmt } from './stats.js';

/**
 * `npx tsx bench/prune.ts [--quick] [--tasks N] [--chunks K] [--count N] [--concurrency C] [--pg URL]`:
 * invoke throughput of a host whose database holds a backlog of old finished ACMP tasks (N tasks with K
 * chunks each: 500,000 × 1 = 1M rows by default), first without pruning, then while a retention pass
 * prunes the backlog in the host's process, as the background pruner does (docs/operations.md
 * "Retention"). The load generator is a child process; the host and the pruner share this one. The
 * figure to read is the ratio; a run is valid only if the pass was still running at the end of the
 * second window (it says so). Figures taken on a busy machine are not results.
 */
const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    tasks: { type: 'string' },
    chunks: { type: 'string' },
    count: { type: 'string' },
    concurrency: { type: 'string' },
    pg: { type: 'string' },
  },
});
const quick = flags.quick ?? false;
const tasks = Number(flags.tasks ?? (quick ? 2_000 : 500_000));
const chunks = Number(flags.chunks ?? 1);
const count = Number(flags.count ?? (quick ? 300 : 20_000));
const concurrency = Number(flags.concurrency ?? (quick ? 4 : 16));
const log = (line: string): void => void process.stdout.write(`${line}\n`);

const DAY = 86_400_000;
const SEED_ROWS = 500;

/** The backlog: finished tasks 30 days old (past every default age), written a multi-row INSERT at a time. */
async function seed(database: Database): Promise<void> {
  const at = Date.now() - 30 * DAY;
  const outcome = JSON.stringify({
    kind: 'result',
    result: {
      task_id: 't',
      output: { type: 'text', data: 'ok' },
      output_streamed: false,
      tokens_used: 1,
      cost_cu: 0,
    },
  });
  for (let from = 0; from < tasks; from += SEED_ROWS) {
    const ids = Array.from({ length: Math.min(SEED_ROWS, tasks - from) }, (_, i) => `old-${from + i}`);
    await sql`INSERT INTO acmp_tasks (task_id, tenant, agent, params_hash, context_id, request, host_id, state, created_at, deadline_at, updated_at, chunk_count, outcome, end_state, finished_at)
      VALUES ${sql.join(ids.map((id) => sql`(${id}, '', 'anonymous', 'sha256:x', 'ctx', '{}', 'h', 'finished', ${at}, ${at}, ${at}, ${chunks}, ${outcome}, 'completed', ${at})`))}`.execute(
      database.db,
    );
    if (chunks > 0)
      await sql`INSERT INTO acmp_task_chunks (task_id, seq, chunk) VALUES ${sql.join(
        ids.flatMap((id) =>
          Array.from({ length: chunks }, (_, seq) => sql`(${id}, ${seq}, '{"type":"text","data":"c"}')`),
        ),
      )}`.execute(database.db);
  }
}

/** The in-process host as the load generator's server: its URL, and this process's CPU time and RSS. */
function asServer(host: RunningHost): ServerProc {
  return {
    url: host.url,
    grpcUrl: undefined,
    caCert: undefined,
    stats: () => {
      const cpu = process.cpuUsage();
      return Promise.resolve({ cpuUs: cpu.user + cpu.system, rss: process.memoryUsage().rss });
    },
    close: () => host.close(),
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'a2ac-bench-prune-'));
  // Background pruning off: the pass below is started by hand, at the start of the second window.
  const config = resolveHostConfig(
    {
      host: '127.0.0.1',
      port: '0',
      'no-tls': true,
      'data-dir': dataDir,
      'rate-limit': '0',
      'prune-interval': 'off',
      ...(flags.pg ? { db: flags.pg } : {}),
    },
    {},
  );
  const module = acmpModule({
    capabilities: [{ id: 'noop', price: 0, handler: () => Promise.resolve({ type: 'text', data: 'ok' }) }],
  });
  const host = await startHost(config, { modules: [module], migrate: true });
  const load = new LoadGen();
  try {
    const database = host.database;
    if (!database) throw new Error('the bench host has no database');
    log(`seeding ${tasks} finished tasks × ${chunks} chunk(s) on ${database.dialect}…`);
    await seed(database);
    const spec = {
      scenario: { kind: 'acmp-invoke' as const },
      concurrency,
      warmup: Math.ceil(count / 10),
      count,
    };
    const quiet = metricsOf(await load.measure(asServer(host), spec));
    const started = Date.now();
    let finishedAt: number | undefined;
    // The pass is stopped at the end of the second window (as a host's stop would): its pace, not its
    // length, is what the window measures.
    const stop = new AbortController();
    const pass = hostPruner(database, config.retention, systemClock)
      .prune({ wait: true, signal: stop.signal })
      .finally(() => (finishedAt = Date.now()));
    const pruning = metricsOf(await load.measure(asServer(host), spec));
    const windowEnd = Date.now();
    stop.abort();
    const run = await pass;
    const rows = run.counts.reduce((sum, c) => sum + c.rows, 0);
    log(`invokes/s without pruning: ${fmt(quiet.opsPerSec)} (p99 ${fmt(quiet.p99)} ms)`);
    log(`invokes/s while pruning:   ${fmt(pruning.opsPerSec)} (p99 ${fmt(pruning.p99)} ms)`);
    log(`ratio (pruning / without): ${fmt(pruning.opsPerSec / quiet.opsPerSec)}`);
    log(
      `pruned ${rows} rows in ${fmt(((finishedAt ?? windowEnd) - started) / 1000)} s (batch ${config.retention.batching.batchSize}, pause ${config.retention.batching.pauseMs} ms)`,
    );
    log(
      finishedAt !== undefined && finishedAt < windowEnd - 1
        ? 'NOTE: the pass ended before the second window did: raise --count (or --tasks) for a valid run'
        : 'the pass ran for the whole second window',
    );
  } finally {
    load.close();
    await host.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();

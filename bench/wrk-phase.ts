import { availableParallelism } from 'node:os';
import { startCliHost, startFloor, type CliHost } from './cli-host.js';
import type { RatioLine, Results } from './report.js';
import { fmt } from './stats.js';
import { ensureWrk, invokeScript, measureWrk, scriptFile, type WrkMeasured } from './wrk.js';

/**
 * The `wrk` phase of `npm run bench`: the figure a user would measure. The default host started as a user
 * starts it (`serve`: SQLite in the data dir, durable, self-signed TLS, demo modules; only the per-caller
 * limits off), the same with `--db memory`, and the floor (a bare node:https JSON-RPC echo with the same
 * certificate), each driven by wrk with non-streamed `acmp/invoke` of the demo `sentiment-analysis`
 * capability, fresh task ids, c1/c16/c64. With two or more cores the servers run on CPU 0 and wrk on CPU 1.
 */

const CONCURRENCY = [1, 16, 64] as const;
const SERVERS = [
  { key: 'floor', label: 'floor: bare node:https JSON-RPC echo' },
  { key: 'sqlite', label: 'default host (serve: SQLite, durable, TLS)' },
  { key: 'memory', label: 'default host with --db memory (TLS)' },
] as const;

/** What the phase needs from the orchestrator. */
export interface WrkPhaseContext {
  rep: number;
  quick: boolean;
  results: Results;
  log(line: string): void;
}

function record(ctx: WrkPhaseContext, key: string, label: string, m: WrkMeasured): void {
  const { figures: f } = m;
  const seconds = f.durationUs / 1e6;
  const row = ctx.results.add(key, 'wrk', label, 'req', {
    opsPerSec: f.requests / seconds,
    eventsPerSec: f.requests / seconds,
    p50: f.p50Us / 1000,
    p99: f.p99Us / 1000,
    cpuUsPerOp: m.serverCpuUs / f.requests,
    rssMb: m.rss / 2 ** 20,
    windowDeviation: NaN,
  });
  const bad = f.errors + f.non2xx + f.unanswered;
  if (bad > 0)
    ctx.results.notes.push(
      `${label}: ${f.errors} socket errors, ${f.non2xx} non-2xx, ${f.unanswered} answers without acmp_result of ${f.requests} — not a result`,
    );
  if (!m.warmUp.stable && !ctx.quick)
    ctx.results.notes.push(`${label}: wrk warm-up did not settle (${m.warmUp.rates.map(fmt).join(', ')}/s)`);
  ctx.log(
    `  ${label.padEnd(66)} ${fmt(row.opsPerSec).padStart(8)} req/s  p50 ${fmt(row.p50)} ms  p99 ${fmt(row.p99)} ms  cpu ${fmt(row.cpuUsPerOp)} µs/req  bad ${bad}  warm-up ${m.warmUp.rates.length} s`,
  );
}

/** Runs the phase once (one repetition); prints and skips it when wrk cannot be had. */
export async function wrkPhase(ctx: WrkPhaseContext): Promise<void> {
  const found = ensureWrk();
  if ('reason' in found) {
    ctx.results.notes.push(`wrk phase skipped: ${found.reason}`);
    ctx.log(`  wrk phase skipped: ${found.reason}`);
    return;
  }
  const split = availableParallelism() >= 2;
  const serverCpus = split ? '0' : undefined;
  const script = scriptFile(invokeScript('sentiment-analysis', 'good results, strong growth'));
  const hosts: CliHost[] = [];
  try {
    const sqlite = await startCliHost({ cpus: serverCpus });
    hosts.push(sqlite);
    const memory = await startCliHost({ cpus: serverCpus, args: ['--db', 'memory'] });
    hosts.push(memory);
    const floor = await startFloor({ tlsFrom: sqlite, cpus: serverCpus });
    hosts.push(floor);
    const targets = { floor, sqlite, memory };
    for (const c of CONCURRENCY) {
      const order = ctx.rep % 2 === 0 ? SERVERS : [...SERVERS].reverse();
      for (const server of order) {
        const measured = await measureWrk(targets[server.key], {
          wrk: found.path,
          script,
          connections: c,
          cpus: split ? '1' : undefined,
          warmupCapS: ctx.quick ? 1 : 20,
          measureS: ctx.quick ? 1 : 10,
        });
        record(ctx, `wrk-${server.key}-c${c}`, `${server.label}, wrk c${c}`, measured);
      }
    }
  } finally {
    await Promise.all(hosts.map((h) => h.close()));
  }
}

/** The phase's lines of the ratio table (targets of the default host from the method). */
export function wrkRatioLines(results: Results): RatioLine[] {
  const cpu = (m: { cpuUsPerOp: number }): number => m.cpuUsPerOp;
  const lines: RatioLine[] = [];
  for (const c of CONCURRENCY) {
    lines.push(
      {
        label: `wrk c${c}: default host (SQLite) / floor, req/s`,
        value: results.ratio(`wrk-sqlite-c${c}`, `wrk-floor-c${c}`),
      },
      {
        label: `wrk c${c}: server CPU per request, default host (SQLite) / floor`,
        value: results.ratio(`wrk-sqlite-c${c}`, `wrk-floor-c${c}`, cpu),
      },
      {
        label: `wrk c${c}: server CPU per request, --db memory / floor`,
        value: results.ratio(`wrk-memory-c${c}`, `wrk-floor-c${c}`, cpu),
      },
    );
  }
  lines.push(
    {
      label: 'wrk c16: server CPU µs per invoke, default host (SQLite, durable)',
      value: results.spreadOf('wrk-sqlite-c16', cpu),
      target: { text: '≤ 120 µs', met: (v) => v <= 120 },
    },
    {
      label: 'wrk c16: server CPU µs per invoke, --db memory',
      value: results.spreadOf('wrk-memory-c16', cpu),
      target: { text: '≤ 80 µs', met: (v) => v <= 80 },
    },
  );
  for (const store of ['sqlite', 'memory'] as const)
    for (const c of [1, 64] as const)
      lines.push({
        label: `wrk: server CPU per invoke, ${store}, c${c} / c16`,
        value: results.ratio(`wrk-${store}-c${c}`, `wrk-${store}-c16`, cpu),
        target: { text: '≤ 1.3', met: (v) => v <= 1.3 },
      });
  return lines;
}

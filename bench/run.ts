import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { InProcessResult, InProcessSpec, LongTransactionFigures } from './acp-inprocess.js';
import { LoadGen, runChild, serverNodeArgs, startServer, type ServerProc } from './procs.js';
import type { Scenario, ServerSpec, SteadySpec } from './protocol.js';
import { chunkTable, metricsOf, ratioTable, Results, type RatioLine } from './report.js';
import { fmt } from './stats.js';
import { ACP_LONG_CHAIN_LENGTH } from './workload.js';
import { wrkPhase, wrkRatioLines } from './wrk-phase.js';

/**
 * `npm run bench [-- --quick] [--only a2a,grpc,sqlite,acp,wrk,memory] [--reps N] [--pg URL] [--profile DIR]`: our bindings against the raw
 * SDK on this machine. Servers and the load generator are separate processes; every repetition starts
 * fresh servers and alternates which side goes first, so drift hits both sides.
 */
const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    reps: { type: 'string' },
    pg: { type: 'string' },
    profile: { type: 'string' },
  },
});
// --profile DIR: every server (and in-process run) writes a V8 CPU profile into DIR.
if (flags.profile) serverNodeArgs.push('--cpu-prof', `--cpu-prof-dir=${flags.profile}`);
const quick = flags.quick ?? false;
const groups = new Set((flags.only ?? 'a2a,grpc,sqlite,acp,wrk,memory').split(','));
if (quick) groups.delete('memory');
// The smoke run does one repetition (its figures are a check, not a result); real runs do at least 3.
const reps = Number(flags.reps ?? (quick ? 1 : 3));
const pgUrl = flags.pg ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const n = (full: number, small: number): number => (quick ? small : full);
// Full runs: these are the least operations a measured phase counts; steady state (below) sets its length.
const counts = {
  warmup: n(200, 30),
  c1: n(10_000, 60),
  c16: n(10_000, 200),
  c64: n(10_000, 200),
  streams: n(2000, 60),
  longStreams: n(20, 1),
  long: n(1000, 200),
  huge: 10_000,
};
/**
 * Full runs measure in steady state: warm up in 1 s windows until two in a row agree within ±5% (at most
 * 20 s), then measure at least 5 s and at least the row's count (at most 60 s). A count ≤ 5 means a
 * fixed run (long streams whose single operations take seconds).
 */
const steadyFor = (count: number): SteadySpec | undefined =>
  quick || count <= 5
    ? undefined
    : { windowMs: 1000, tolerance: 0.05, maxWarmupMs: 20_000, minMs: 5000, minCount: count, maxMs: 60_000 };

const results = new Results();
const load = new LoadGen();
const log = (line: string): void => void process.stdout.write(`${line}\n`);

function environment(): Record<string, string> {
  // The SDK's exports do not list package.json: read it next to the resolved entry point (dist/index.js).
  const entry = createRequire(import.meta.url).resolve('@a2a-js/sdk');
  const sdk = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return {
    node: process.version,
    sdk: `@a2a-js/sdk ${sdk.version}`,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: String(availableParallelism()),
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    platform: `${process.platform} ${process.arch}`,
    mode: quick ? 'quick' : 'full',
    // The machine may be shared: figures taken under load are not results.
    'load average at start (1/5/15 min)': loadAverage(),
    repetitions: String(reps),
  };
}

function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
}

async function measure(
  key: string,
  group: string,
  label: string,
  server: ServerProc,
  scenario: Scenario,
  concurrency: number,
  count: number,
  unit = 'ops',
  warmup = counts.warmup,
): Promise<void> {
  const steady = steadyFor(count);
  const measured = await load.measure(server, { scenario, concurrency, warmup, count, steady });
  const m = results.add(key, group, label, unit, metricsOf(measured));
  const warm = measured.warmUp;
  if (warm && !warm.stable)
    results.notes.push(
      `${label}: warm-up did not settle within ${steady?.maxWarmupMs} ms (last windows ${warm.rates.slice(-2).map(fmt).join(', ')}/s)`,
    );
  log(
    `  ${label.padEnd(58)} ${fmt(m.opsPerSec).padStart(8)} ${unit}/s  p99 ${fmt(m.p99)} ms  cpu ${fmt(m.cpuUsPerOp)} µs/op${warm ? `  warm-up ${warm.rates.length} s${warm.stable ? '' : ' (unsettled)'}` : ''}  load ${loadAverage()}`,
  );
}

/** Runs `steps` in order on even repetitions and in reverse on odd ones (baseline/ours interleaved). */
async function interleaved(rep: number, steps: (() => Promise<void>)[]): Promise<void> {
  for (const step of rep % 2 === 0 ? steps : [...steps].reverse()) await step();
}

async function withServers<T extends Record<string, ServerSpec>>(
  specs: T,
  body: (servers: { [K in keyof T]: ServerProc }) => Promise<void>,
): Promise<void> {
  const entries = await Promise.all(
    Object.entries(specs).map(async ([k, spec]) => [k, await startServer(spec)] as const),
  );
  const servers = Object.fromEntries(entries) as { [K in keyof T]: ServerProc };
  try {
    await body(servers);
  } finally {
    await Promise.all(entries.map(([, s]) => s.close()));
  }
}

const ours = (over: Partial<Extract<ServerSpec, { kind: 'ours' }>> = {}): ServerSpec => ({
  kind: 'ours',
  store: 'memory',
  acmp: true,
  acp: false,
  heartbeats: true,
  tls: false,
  ...over,
});

async function a2aGroup(rep: number): Promise<void> {
  const g = 'a2a';
  // `on` and `off` serve only the heartbeat comparison, so both have the same history (JIT warmth).
  const specs = {
    base: { kind: 'baseline', store: 'memory' },
    // The default modules, as `serve` runs them: over MCP a request's server is built from every module's
    // contribution, so an ACMP-only host hid what ACPspec's cost an invoke (docs/performance.md "MCP on the
    // default host").
    inv: ours({ acp: true }),
    on: ours(),
    off: ours({ heartbeats: false }),
  } as const;
  await withServers(specs, async ({ base, inv, on, off }) => {
    await measure(
      'msg',
      g,
      'baseline: message-path echo, c16',
      base,
      { kind: 'sdk-message' },
      16,
      counts.c16,
    );
    for (const [c, count] of [
      [1, counts.c1],
      [16, counts.c16],
      [64, counts.c64],
    ] as const) {
      await interleaved(rep, [
        () => measure(`task-c${c}`, g, `baseline: task path, c${c}`, base, { kind: 'sdk-task' }, c, count),
        () =>
          measure(
            `invoke-c${c}`,
            g,
            `ours: ACMP invoke (non-streamed), c${c}`,
            inv,
            { kind: 'acmp-invoke' },
            c,
            count,
          ),
        // The same provider over MCP (2026-07-28 Streamable HTTP) beside A2A (docs/acmp-mcp-binding.md).
        ...(c === 64
          ? []
          : [
              () =>
                measure(
                  `mcp-invoke-c${c}`,
                  g,
                  `ours: ACMP invoke over MCP 2026-07-28, c${c}`,
                  inv,
                  { kind: 'mcp-invoke' },
                  c,
                  count,
                ),
            ]),
      ]);
    }
    const stream = (chunks: number, heartbeats: boolean) => ({
      kind: 'acmp-stream' as const,
      chunks,
      heartbeats,
    });
    await interleaved(rep, [
      () =>
        measure(
          'sdk-stream',
          g,
          'baseline: stream of 10 events, c16',
          base,
          { kind: 'sdk-stream', events: 10 },
          16,
          counts.streams,
          'streams',
        ),
      () =>
        measure(
          'stream',
          g,
          'ours: ACMP stream 10 chunks (heartbeats advertised, none due), c16',
          inv,
          stream(10, false),
          16,
          counts.streams,
          'streams',
        ),
    ]);
    await interleaved(rep, [
      () =>
        measure(
          'stream-hb',
          g,
          'ours: stream 10 chunks, heartbeats on, c16',
          on,
          stream(10, false),
          16,
          counts.streams,
          'streams',
        ),
      () =>
        measure(
          'stream-nohb',
          g,
          'ours: stream 10 chunks, heartbeats off, c16',
          off,
          stream(10, false),
          16,
          counts.streams,
          'streams',
        ),
    ]);
    await interleaved(rep, [
      () =>
        measure(
          'stream-xhb-on',
          g,
          'ours: 10 chunks + 10 explicit heartbeats, on, c16',
          on,
          stream(10, true),
          16,
          counts.streams,
          'streams',
        ),
      () =>
        measure(
          'stream-xhb-off',
          g,
          'ours: 10 chunks + 10 explicit heartbeats, off, c16',
          off,
          stream(10, true),
          16,
          counts.streams,
          'streams',
        ),
    ]);
    await interleaved(rep, [
      () =>
        measure(
          'sdk-stream10-c1',
          g,
          'baseline: stream of 10 events, c1',
          base,
          { kind: 'sdk-stream', events: 10 },
          1,
          counts.c1 / 5,
          'streams',
          20,
        ),
      () =>
        measure(
          'sdk-stream1000-c1',
          g,
          `baseline: stream of ${counts.long} events, c1`,
          base,
          { kind: 'sdk-stream', events: counts.long },
          1,
          1,
          'streams',
          0,
        ),
      () =>
        measure(
          'stream10-c1',
          g,
          'ours: ACMP stream 10 chunks, c1',
          off,
          stream(10, false),
          1,
          counts.c1 / 5,
          'streams',
          20,
        ),
      () =>
        measure(
          'stream100-c1',
          g,
          'ours: ACMP stream 100 chunks, c1',
          off,
          stream(100, false),
          1,
          counts.c1 / 10,
          'streams',
          5,
        ),
      () =>
        measure(
          'stream1000-c1',
          g,
          `ours: ACMP stream ${counts.long} chunks, c1`,
          off,
          stream(counts.long, false),
          1,
          counts.longStreams,
          'streams',
          1,
        ),
      // 10,000 chunks: a fixed count (a stream takes a good part of a second), warmed by one.
      () =>
        measure(
          'stream10000-c1',
          g,
          `ours: ACMP stream ${counts.huge} chunks, c1`,
          off,
          stream(counts.huge, false),
          1,
          n(5, 1),
          'streams',
          n(1, 0),
        ),
    ]);
  });
}

/**
 * The third A2A transport beside JSON-RPC, on the same server processes in the same repetition: ACMP
 * invoke (in-memory stores, no TLS) and ACPspec ingest (SQLite, TLS), JSON-RPC and gRPC interleaved.
 */
async function grpcGroup(rep: number): Promise<void> {
  const g = 'grpc';
  await withServers(
    { inv: ours(), acp: ours({ store: 'sqlite', acmp: false, acp: true, tls: true }) },
    async ({ inv, acp }) => {
      for (const [c, count] of [
        [1, counts.c1],
        [16, counts.c16],
      ] as const) {
        await interleaved(rep, [
          () =>
            measure(
              `grpc-jsonrpc-invoke-c${c}`,
              g,
              `ours: ACMP invoke over JSON-RPC, c${c}`,
              inv,
              { kind: 'acmp-invoke' },
              c,
              count,
            ),
          () =>
            measure(
              `grpc-invoke-c${c}`,
              g,
              `ours: ACMP invoke over gRPC, c${c}`,
              inv,
              { kind: 'acmp-invoke-grpc' },
              c,
              count,
            ),
        ]);
      }
      await interleaved(rep, [
        () =>
          measure(
            'grpc-jsonrpc-acp',
            g,
            'ACPspec over A2A JSON-RPC (TLS, SQLite), c16',
            acp,
            { kind: 'acp-a2a' },
            16,
            n(1500, 200),
            'envelopes',
          ),
        () =>
          measure(
            'grpc-acp',
            g,
            'ACPspec over A2A gRPC (TLS, SQLite), c16',
            acp,
            { kind: 'acp-a2a-grpc' },
            16,
            n(1500, 200),
            'envelopes',
          ),
      ]);
    },
  );
}

async function sqliteGroup(rep: number): Promise<void> {
  await withServers(
    { base: { kind: 'baseline', store: 'sqlite' }, mine: ours({ store: 'sqlite' }) },
    async ({ base, mine }) => {
      await interleaved(rep, [
        () =>
          measure(
            'sqlite-task-c16',
            'sqlite',
            'baseline: task path, SQLite store, c16',
            base,
            { kind: 'sdk-task' },
            16,
            counts.c16 / 2,
          ),
        () =>
          measure(
            'sqlite-invoke-c16',
            'sqlite',
            'ours: ACMP invoke, SQLite stores, c16',
            mine,
            { kind: 'acmp-invoke' },
            16,
            counts.c16 / 2,
          ),
      ]);
    },
  );
  // Metrics overhead: two servers with the same history, one reporting to Prometheus (store commit
  // timings included, which only SQLite and PostgreSQL stores make), one to the no-op metrics.
  await withServers(
    { met: ours({ store: 'sqlite' }), nomet: ours({ store: 'sqlite', metrics: false }) },
    async ({ met, nomet }) => {
      const invoke = (key: string, label: string, server: ServerProc) => () =>
        measure(key, 'sqlite', label, server, { kind: 'acmp-invoke' }, 16, counts.c16 / 2);
      await interleaved(rep, [
        invoke('metrics-on-invoke-c16', 'ours: ACMP invoke, SQLite, Prometheus metrics, c16', met),
        invoke('metrics-off-invoke-c16', 'ours: ACMP invoke, SQLite, no-op metrics, c16', nomet),
      ]);
    },
  );
}

async function pgReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

/** Long-transaction figures per repetition (CPU per envelope at the start and at the end; state request times). */
const longFigures: LongTransactionFigures[] = [];

async function acpGroup(rep: number, withPg: boolean): Promise<void> {
  const inProcess = async (
    store: 'sqlite' | 'postgres',
    concurrency: number,
    chainLength = 20,
  ): Promise<void> => {
    const long = chainLength > 20;
    // Long enough for the JIT to settle: short runs report start-up work as per-envelope cost.
    const count = long
      ? n(5000, 2000)
      : store === 'postgres' && concurrency === 1
        ? n(4000, 600)
        : n(20_000, 1000);
    const spec: InProcessSpec = {
      store,
      pgUrl,
      warmup: long ? n(2000, 1000) : n(3000, 200),
      count,
      concurrency,
      chainLength,
    };
    const load = loadAverage();
    const result = await runChild<InProcessResult>('./acp-inprocess.ts', spec);
    const name = store === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    const key = long
      ? `acp-inproc-${store}-long`
      : `acp-inproc-${store}${concurrency > 1 ? `-c${concurrency}` : ''}`;
    const label = long
      ? `ACPspec in process, ${name}, ${chainLength}-envelope transactions`
      : `ACPspec in process, ${name}${concurrency > 1 ? `, ${concurrency} transactions at once` : ', one after another'}`;
    const m = results.add(
      key,
      'acp',
      label,
      'envelopes',
      metricsOf({ load: result, serverCpuUs: result.cpuUs, rss: NaN }),
    );
    const pgCpu =
      typeof result.pgCpuUs !== 'number' || !Number.isFinite(result.pgCpuUs)
        ? ''
        : ` + PostgreSQL ${fmt(result.pgCpuUs / result.count)} µs`;
    results.notes.push(
      `${label}: ${fmt(m.opsPerSec)}/s, CPU ${fmt(m.cpuUsPerOp)} µs/envelope${pgCpu}, mean batch ${result.meanBatch.toFixed(1)} (load average ${load})`,
    );
    if (result.long) {
      longFigures.push(result.long);
      results.notes.push(
        `${label}: CPU per envelope 1–100 ${fmt(result.long.firstCpuUs)} µs, 901–1,000 ${fmt(result.long.lastCpuUs)} µs; state request ${result.long.stateWarmMs.toFixed(2)} ms held, ${result.long.stateColdMs.toFixed(2)} ms from the store (load average ${load})`,
      );
    }
    log(
      `  ${label}`.padEnd(60) +
        `${fmt(m.opsPerSec).padStart(8)} envelopes/s  cpu ${fmt(m.cpuUsPerOp)} µs${pgCpu}  batch ${result.meanBatch.toFixed(1)}  load ${load}`,
    );
  };
  await interleaved(rep, [
    () => inProcess('sqlite', 1),
    () => inProcess('sqlite', 16),
    () => inProcess('sqlite', 1, ACP_LONG_CHAIN_LENGTH),
    ...(withPg ? [() => inProcess('postgres', 1), () => inProcess('postgres', 16)] : []),
  ]);
  await withServers(
    { acp: ours({ store: 'sqlite', acmp: false, acp: true, tls: true }) },
    async ({ acp }) => {
      // Both bindings share the ingest pipeline and the database: warm both up (unmeasured) first, or the
      // binding measured first in a fresh server pays for the JIT and caches of both (its ratio swung
      // 0.58–1.0 with the order alone).
      for (const kind of ['acp-https', 'acp-a2a'] as const)
        await load.measure(acp, { scenario: { kind }, concurrency: 16, warmup: 0, count: n(3000, 100) });
      await interleaved(rep, [
        // A thousand envelopes of warm-up each: the A2A path runs much more code (the SDK's JSON-RPC handling),
        // and 200 left its JIT start-up inside the measured phase of whichever binding went first.
        () =>
          measure(
            'acp-a2a',
            'acp',
            'ACPspec over A2A JSON-RPC (TLS, SQLite), c16',
            acp,
            { kind: 'acp-a2a' },
            16,
            n(4000, 200),
            'envelopes',
            n(1000, 100),
          ),
        () =>
          measure(
            'acp-https',
            'acp',
            'ACPspec over HTTPS (TLS, SQLite), c16',
            acp,
            { kind: 'acp-https' },
            16,
            n(4000, 200),
            'envelopes',
            n(1000, 100),
          ),
      ]);
    },
  );
}

/** RSS of one server after 10k and after 100k ACMP tasks on SQLite (one repetition: it is long). */
async function memoryGroup(): Promise<{ at10k: number; at100k: number }> {
  const server = await startServer(ours({ store: 'sqlite' }), { exposeGc: true });
  try {
    const idle = (await server.stats(true)).rss;
    let done = 0;
    const rssAt: number[] = [];
    for (const target of [10_000, 100_000]) {
      while (done < target) {
        const batch = Math.min(10_000, target - done);
        const measured = await load.measure(server, {
          scenario: { kind: 'acmp-invoke' },
          concurrency: 16,
          warmup: 0,
          count: batch,
        });
        done += batch;
        const m = metricsOf(measured);
        log(
          `  ACMP tasks on SQLite: ${done.toLocaleString('en-US')} done, ${fmt(m.opsPerSec)} invokes/s, cpu ${fmt(m.cpuUsPerOp)} µs/op, RSS ${fmt(m.rssMb)} MB`,
        );
      }
      rssAt.push((await server.stats(true)).rss / 2 ** 20);
    }
    results.notes.push(
      `memory: idle ${fmt(idle / 2 ** 20)} MB, after 10k tasks ${fmt(rssAt[0]!)} MB, after 100k ${fmt(rssAt[1]!)} MB (RSS after a full GC)`,
    );
    return { at10k: rssAt[0]!, at100k: rssAt[1]! };
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  const env = environment();
  log('# a2a-commerce benchmarks\n');
  for (const [k, v] of Object.entries(env)) log(`- ${k}: ${v}`);
  const withPg = groups.has('acp') && (await pgReachable());
  if (groups.has('acp') && !withPg)
    results.notes.push(`PostgreSQL not reachable at ${pgUrl}: in-process PostgreSQL skipped`);
  const started = Date.now();
  for (let rep = 0; rep < reps; rep++) {
    log(`\n## repetition ${rep + 1}/${reps}`);
    if (groups.has('a2a')) await a2aGroup(rep);
    if (groups.has('grpc')) await grpcGroup(rep);
    if (groups.has('sqlite')) await sqliteGroup(rep);
    if (groups.has('acp')) await acpGroup(rep, withPg);
    if (groups.has('wrk')) await wrkPhase({ rep, quick, results, log });
  }
  const memory = groups.has('memory') ? (log('\n## memory'), await memoryGroup()) : undefined;
  load.close();

  const lines: RatioLine[] = [
    { label: 'ACMP invoke / baseline task path, c1', value: results.ratio('invoke-c1', 'task-c1') },
    {
      label: 'ACMP invoke / baseline task path, c16',
      value: results.ratio('invoke-c16', 'task-c16'),
      target: { text: '≥ 0.9', met: (v) => v >= 0.9 },
    },
    { label: 'ACMP invoke / baseline task path, c64', value: results.ratio('invoke-c64', 'task-c64') },
    {
      label: 'server CPU per op, baseline task path / ACMP invoke, c16',
      value: results.ratio('task-c16', 'invoke-c16', (m) => m.cpuUsPerOp),
    },
    { label: 'ACMP invoke over MCP / over A2A, c1', value: results.ratio('mcp-invoke-c1', 'invoke-c1') },
    { label: 'ACMP invoke over MCP / over A2A, c16', value: results.ratio('mcp-invoke-c16', 'invoke-c16') },
    {
      label: 'server CPU per op, A2A / MCP ACMP invoke, c16',
      value: results.ratio('invoke-c16', 'mcp-invoke-c16', (m) => m.cpuUsPerOp),
    },
    {
      label: 'ACMP invoke, Prometheus metrics / no-op metrics, SQLite, c16',
      value: results.ratio('metrics-on-invoke-c16', 'metrics-off-invoke-c16'),
      target: { text: '≥ 0.97 (within noise)', met: (v) => v >= 0.97 },
    },
    {
      label: 'server CPU per op, no-op / Prometheus metrics, SQLite, c16',
      value: results.ratio('metrics-off-invoke-c16', 'metrics-on-invoke-c16', (m) => m.cpuUsPerOp),
    },
    {
      label: 'ACMP invoke / baseline task path, SQLite, c16',
      value: results.ratio('sqlite-invoke-c16', 'sqlite-task-c16'),
    },
    {
      label: 'ACMP stream (10 chunks) / baseline stream (10 events), c16',
      value: results.ratio('stream', 'sdk-stream'),
    },
    {
      label: 'heartbeats on / off (interval timer, 10 chunks), streams/s',
      value: results.ratio('stream-hb', 'stream-nohb'),
      target: { text: '≥ 0.9 (cost ≤ 10%)', met: (v) => v >= 0.9 },
    },
    {
      label: 'server CPU per stream, heartbeats off / on (interval timer)',
      value: results.ratio('stream-nohb', 'stream-hb', (m) => m.cpuUsPerOp),
    },
    {
      label: 'heartbeats on / off (10 explicit heartbeats per stream), streams/s',
      value: results.ratio('stream-xhb-on', 'stream-xhb-off'),
    },
    {
      label: `ours: marginal CPU per chunk, 100→${counts.long} / 10→100 chunks`,
      value: results.combine(
        ['stream10-c1', 'stream100-c1', 'stream1000-c1'],
        ([a, b, c]) =>
          (c!.cpuUsPerOp - b!.cpuUsPerOp) / (counts.long - 100) / ((b!.cpuUsPerOp - a!.cpuUsPerOp) / 90),
      ),
      target: { text: '≈ 1 (flat)', met: (v) => v <= 1.25 },
    },
    {
      label: `ours: marginal CPU per chunk, ${counts.long}→${counts.huge} / 10→100 chunks`,
      value: results.combine(
        ['stream10-c1', 'stream100-c1', 'stream1000-c1', 'stream10000-c1'],
        ([a, b, c, d]) =>
          (d!.cpuUsPerOp - c!.cpuUsPerOp) /
          (counts.huge - counts.long) /
          ((b!.cpuUsPerOp - a!.cpuUsPerOp) / 90),
      ),
      target: { text: '≈ 1 (flat)', met: (v) => v <= 1.25 },
    },
    {
      label: `baseline: CPU per event, ${counts.long}-event / 10-event stream`,
      value: results.combine(
        ['sdk-stream10-c1', 'sdk-stream1000-c1'],
        ([a, b]) => b!.cpuUsPerOp / counts.long / (a!.cpuUsPerOp / 10),
      ),
    },
    { label: 'ACPspec over HTTPS / over A2A, envelopes/s', value: results.ratio('acp-https', 'acp-a2a') },
    {
      label: 'ACMP invoke gRPC / JSON-RPC, c1',
      value: results.ratio('grpc-invoke-c1', 'grpc-jsonrpc-invoke-c1'),
    },
    {
      label: 'ACMP invoke gRPC / JSON-RPC, c16',
      value: results.ratio('grpc-invoke-c16', 'grpc-jsonrpc-invoke-c16'),
    },
    {
      label: 'server CPU per ACMP invoke, JSON-RPC / gRPC, c16',
      value: results.ratio('grpc-jsonrpc-invoke-c16', 'grpc-invoke-c16', (m) => m.cpuUsPerOp),
    },
    {
      label: 'ACPspec ingest over A2A, gRPC / JSON-RPC, envelopes/s',
      value: results.ratio('grpc-acp', 'grpc-jsonrpc-acp'),
    },
    {
      label: 'server CPU per ACPspec envelope, JSON-RPC / gRPC',
      value: results.ratio('grpc-jsonrpc-acp', 'grpc-acp', (m) => m.cpuUsPerOp),
    },
    {
      label: 'ACPspec over A2A / over HTTPS, envelopes/s',
      value: results.ratio('acp-a2a', 'acp-https'),
      target: { text: '≥ 0.8', met: (v) => v >= 0.8 },
    },
    ...wrkRatioLines(results),
  ];
  const inproc = results.spreadOf('acp-inproc-sqlite', (m) => m.opsPerSec);
  const target = (key: string, text: string, goal: number): string => {
    const spread = results.spreadOf(key, (m) => m.opsPerSec);
    return `- ${text} ≥ ${fmt(goal)} envelopes/s: ${spread ? `${fmt(spread.median)} (${fmt(spread.min)}–${fmt(spread.max)})/s — ${spread.median >= goal ? 'met' : '**missed**'}` : 'not measured'}`;
  };
  const median = (values: number[]): number =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
  const flat = median(longFigures.map((f) => f.lastCpuUs / f.firstCpuUs));
  const stateCold = median(longFigures.map((f) => f.stateColdMs));
  const report = [
    '# a2a-commerce benchmark results',
    '',
    ...Object.entries(env).map(([k, v]) => `- ${k}: ${v}`),
    `- duration: ${Math.round((Date.now() - started) / 1000)} s`,
    '',
    '## A2A JSON-RPC, in-memory stores (median (min–max) over repetitions; other columns: median)',
    results.table('a2a'),
    '',
    '## A2A gRPC beside JSON-RPC (same servers, same repetition)',
    results.table('grpc'),
    '',
    '## A2A JSON-RPC, SQLite stores',
    results.table('sqlite'),
    '',
    '## ACPspec (SQLite unless named)',
    results.table('acp'),
    '',
    '## wrk: the default host as a user measures it (server CPU from /proc; floor = bare node:https echo)',
    results.table('wrk'),
    '',
    '## ACMP stream: server CPU per chunk (c1, median over repetitions)',
    chunkTable(results, [
      [10, 'stream10-c1'],
      [100, 'stream100-c1'],
      [counts.long, 'stream1000-c1'],
      [counts.huge, 'stream10000-c1'],
    ]),
    '',
    '## Ratios (computed per repetition, ours / baseline in the same repetition)',
    ratioTable(lines),
    '',
    '## Other targets',
    `- ACPspec in process on SQLite ≥ 10,000 envelopes/s, one after another: ${inproc ? `${fmt(inproc.median)} (${fmt(inproc.min)}–${fmt(inproc.max)})/s — ${inproc.median >= 10_000 ? 'met' : '**missed**'}` : 'not measured'}`,
    target(
      'acp-inproc-sqlite-c16',
      'ACPspec in process on SQLite, 16 transactions at once (group commit),',
      10_000,
    ),
    target('acp-inproc-postgres-c16', 'ACPspec in process on PostgreSQL, 16 transactions at once,', 5000),
    target('acp-https', 'ACPspec over HTTPS at c16', 3000),
    `- ACPspec CPU per envelope 901–1,000 of a 1,000-envelope transaction ≤ 1.5× envelopes 1–100: ${longFigures.length ? `${flat.toFixed(2)}× — ${flat <= 1.5 ? 'met' : '**missed**'}` : 'not measured'}`,
    `- ACPspec state request for that transaction ≤ 5 ms (from the store, nothing held): ${longFigures.length ? `${stateCold.toFixed(2)} ms — ${stateCold <= 5 ? 'met' : '**missed**'}` : 'not measured'}`,
    `- load average at the end of the run: ${loadAverage()} (figures of a loaded machine must be re-measured on a quiet one)`,
    `- RSS within ±20% between 10k and 100k ACMP tasks (SQLite): ${memory ? `${fmt(memory.at10k)} MB → ${fmt(memory.at100k)} MB (${((memory.at100k / memory.at10k - 1) * 100).toFixed(1)}%) — ${Math.abs(memory.at100k / memory.at10k - 1) <= 0.2 ? 'met' : '**missed**'}` : 'not measured (--quick)'}`,
    ...results.notes.map((note) => `- ${note}`),
    `- load average at the end (1/5/15 min): ${loadAverage()} on ${availableParallelism()} cores`,
  ].join('\n');
  log(`\n${report}`);
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL(`latest${quick ? '-quick' : ''}.md`, dir), `${report}\n`);
  writeFileSync(
    new URL(`latest${quick ? '-quick' : ''}.json`, dir),
    JSON.stringify({ env, ...results.toJSON() }, null, 2),
  );
}

main().catch((error: unknown) => {
  load.close();
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});

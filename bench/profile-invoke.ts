import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { LoadGen, serverNodeArgs, startServer } from './procs.js';
import type { ServerSpec } from './protocol.js';

/**
 * `tsx bench/profile-invoke.ts [--count N] [--concurrency C] [--store memory|sqlite] [--baseline] [--mcp] [--profile DIR]`:
 * one long steady-state run of non-streamed invokes (ours: ACMP `noop` over A2A JSON-RPC, or with `--mcp`
 * over MCP Streamable HTTP; `--baseline`: the raw SDK task path) to read server CPU per operation and, with `--profile`, a CPU profile dominated by the hot path
 * rather than start-up. Prints the load average beside the figures; quiet machines only for results.
 */
const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '6000' },
    concurrency: { type: 'string', default: '16' },
    store: { type: 'string', default: 'memory' },
    baseline: { type: 'boolean', default: false },
    mcp: { type: 'boolean', default: false },
    profile: { type: 'string' },
  },
});
if (values.profile) serverNodeArgs.push('--cpu-prof', `--cpu-prof-dir=${values.profile}`);
const store = values.store === 'sqlite' ? 'sqlite' : 'memory';
const spec: ServerSpec = values.baseline
  ? { kind: 'baseline', store }
  : { kind: 'ours', store, acmp: true, acp: true, heartbeats: true, tls: false };
const server = await startServer(spec);
const load = new LoadGen();
try {
  const count = Number(values.count);
  const concurrency = Number(values.concurrency);
  const scenario = values.baseline
    ? ({ kind: 'sdk-task' } as const)
    : values.mcp
      ? ({ kind: 'mcp-invoke' } as const)
      : ({ kind: 'acmp-invoke' } as const);
  const measured = await load.measure(server, {
    scenario,
    concurrency,
    warmup: Math.min(1000, count),
    count,
  });
  const perSecond = measured.load.count / (measured.load.elapsedMs / 1000);
  const what = values.baseline ? 'baseline task path' : values.mcp ? 'ACMP invoke over MCP' : 'ACMP invoke';
  const line = `${what} ${store} c${concurrency}: ${perSecond.toFixed(0)}/s, server CPU ${(measured.serverCpuUs / count).toFixed(0)} µs/op, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
  process.stdout.write(`${line}\n`);
} finally {
  load.close();
  await server.close();
}

/**
 * `npm run fuzz`: the long fuzz run. FUZZ_RUNS requests per endpoint (default 20,000, so 60,000 in all)
 * against a real host on SQLite (FUZZ_DB=postgres://… for PostgreSQL), FUZZ_SEED for a fixed seed.
 * Prints counts by endpoint and status, the first failures with the request that caused them, and the
 * process's RSS after a warm-up and at the end (run with --expose-gc so both are measured after a
 * collection). Exits 1 when any reply broke an invariant, the host stopped answering valid requests, or
 * RSS grew by more than FUZZ_RSS_GROWTH_MB (default 150).
 */
import fc from 'fast-check';
import { cleanup } from '../helpers/host.js';
import { jsonRpcRequest } from './jsonrpc-requests.js';
import { restRequest } from './rest-requests.js';
import { acpRequest } from './acp-requests.js';
import { checkHealthy, startFuzzHost } from './fuzz-host.js';
import { describeRequest, FuzzStats, sendFuzz } from './harness.js';
import type { Endpoint, FuzzRequest } from './request.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 20_000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const RSS_GROWTH_MB = Number(process.env.FUZZ_RSS_GROWTH_MB ?? 150);
const HEALTH_EVERY = 2_000;
const WARM_UP = 2_000;

const ARBITRARIES: [Endpoint, fc.Arbitrary<FuzzRequest>][] = [
  ['jsonrpc', jsonRpcRequest],
  ['rest', restRequest],
  ['acp', acpRequest],
];

function rssMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return Math.round(process.memoryUsage().rss / 2 ** 20);
}

function heapMb(): number {
  return Math.round(process.memoryUsage().heapUsed / 2 ** 20);
}

async function runEndpoint(
  url: string,
  arbitrary: fc.Arbitrary<FuzzRequest>,
  runs: number,
  seed: number,
  stats: FuzzStats,
): Promise<void> {
  let sent = 0;
  await fc.check(
    fc.asyncProperty(arbitrary, async (request) => {
      stats.record(request, await sendFuzz(url, request));
      if (++sent % HEALTH_EVERY === 0) {
        await checkHealthy(url);
        if (process.env.FUZZ_VERBOSE) console.log(`    ${sent}: RSS ${rssMb()} MB, heap ${heapMb()} MB`);
      }
      return true;
    }),
    { numRuns: runs, seed },
  );
}

async function main(): Promise<number> {
  const host = await startFuzzHost(process.env.FUZZ_DB ? { db: process.env.FUZZ_DB } : {});
  const stats = new FuzzStats();
  const started = Date.now();
  console.log(`fuzz: ${RUNS} requests per endpoint, seed ${SEED}, host ${host.url}`);
  // The baseline is taken once caches (SQLite pages, compiled code, the receiver's state cache) are warm.
  for (const [, arbitrary] of ARBITRARIES)
    await runEndpoint(host.url, arbitrary, WARM_UP, SEED - 1, new FuzzStats());
  const rssBefore = rssMb();
  for (const [endpoint, arbitrary] of ARBITRARIES) {
    const before = Date.now();
    await runEndpoint(host.url, arbitrary, RUNS, SEED, stats);
    console.log(
      `  ${endpoint}: ${stats.total(endpoint)} requests in ${((Date.now() - before) / 1000).toFixed(1)} s`,
    );
  }
  let healthy = true;
  try {
    await checkHealthy(host.url);
  } catch (error) {
    healthy = false;
    console.log(`host no longer answers valid requests: ${(error as Error).message}`);
  }
  const rssAfter = rssMb();
  console.log(
    `\ncounts by endpoint and status (${stats.total()} requests, ${((Date.now() - started) / 1000).toFixed(0)} s):\n${stats.table()}`,
  );
  console.log(
    `\nRSS after warm-up ${rssBefore} MB, at the end ${rssAfter} MB (${rssAfter - rssBefore >= 0 ? '+' : ''}${rssAfter - rssBefore} MB; heap ${heapMb()} MB)`,
  );
  if (stats.failed > 0)
    console.log(`\n${stats.failed} replies broke an invariant; the first ${stats.failures.length}:`);
  for (const { request, outcome } of stats.failures)
    console.log(`\nFAIL ${outcome.problems.join('; ')}\n  ${describeRequest(request)}`);
  const failed = stats.failed > 0 || !healthy || rssAfter - rssBefore > RSS_GROWTH_MB;
  console.log(failed ? `\nfuzz: FAILED (seed ${SEED})` : '\nfuzz: all invariants held');
  await cleanup();
  return failed ? 1 : 0;
}

process.exitCode = await main();

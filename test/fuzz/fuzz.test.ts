import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup } from '../helpers/host.js';
import { jsonRpcRequest } from './jsonrpc-requests.js';
import { restRequest } from './rest-requests.js';
import { acpRequest } from './acp-requests.js';
import { checkHealthy, startFuzzHost } from './fuzz-host.js';
import { describeRequest, FuzzStats, sendFuzz } from './harness.js';
import type { Endpoint, FuzzRequest } from './request.js';

/**
 * A bounded slice of the fuzz suite (`npm run fuzz` runs it long): property-based requests against a real
 * host on SQLite, for each endpoint; every reply keeps the invariants of docs/host.md "Bad input", and
 * the host still answers valid requests afterwards. FUZZ_RUNS sets the cases per endpoint, FUZZ_SEED the seed.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
/** Each endpoint's run stops after this long, so the slice stays bounded on a slow machine. */
const TIME_LIMIT_MS = 12_000;

const ARBITRARIES: Record<Endpoint, fc.Arbitrary<FuzzRequest>> = {
  jsonrpc: jsonRpcRequest,
  rest: restRequest,
  acp: acpRequest,
};

describe('fuzz: bad input never gets a 5xx, internal text or an uncoded error (docs/host.md "Bad input")', () => {
  let url = '';
  beforeAll(async () => {
    url = (await startFuzzHost()).url;
  });
  afterAll(cleanup);

  for (const endpoint of ['jsonrpc', 'rest', 'acp'] as const) {
    it(`keeps the invariants on ${endpoint} requests`, async () => {
      const stats = new FuzzStats();
      await fc.assert(
        fc.asyncProperty(ARBITRARIES[endpoint], async (request) => {
          const outcome = await sendFuzz(url, request);
          stats.record(request, outcome);
          if (outcome.problems.length > 0)
            throw new Error(`${outcome.problems.join('; ')} — ${describeRequest(request)}`);
        }),
        {
          numRuns: RUNS,
          interruptAfterTimeLimit: TIME_LIMIT_MS,
          ...(SEED === undefined ? {} : { seed: SEED }),
        },
      );
      expect(stats.total()).toBeGreaterThan(0);
      await checkHealthy(url);
    }, 60_000);
  }
});

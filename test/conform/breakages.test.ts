import { afterEach, describe, expect, it } from 'vitest';
import { acmpChecks } from '../../src/conform/acmp/index.js';
import { runConformance } from '../../src/conform/runner.js';
import { cleanup } from '../helpers/cleanup.js';
import { BREAKAGES } from './breakages.js';
import { startBrokenAgent } from './fixture-agent.js';

afterEach(cleanup);

describe('each ACMP check can fail (docs/conformance.md "ACMP checks")', () => {
  it('has a breakage for every ACMP check', () => {
    expect(new Set(BREAKAGES.map((b) => b.breaks))).toEqual(new Set(acmpChecks.map((c) => c.id)));
  });

  // A fresh host and proxy per breakage: a proxy's rewrites keep state (ids seen, renamed).
  it.each(BREAKAGES.map((b) => [b.name, b] as const))(
    '%s fails exactly its check',
    async (_name, breakage) => {
      const agent = await startBrokenAgent(breakage.rewrites);
      const report = await runConformance({
        url: agent.url,
        maxSpendCu: 1,
        only: acmpChecks.map((c) => c.id),
      });
      const failed = report.results.filter((r) => r.status === 'fail');
      expect(failed.map((r) => [r.id, r.evidence])).toEqual([[breakage.breaks, expect.any(String)]]);
      // A check that calls the agent fails over both transports the proxy breaks.
      if (!/^acmp-(a2a-card-|mcp-)/.test(breakage.breaks))
        expect(failed[0]?.evidence).toMatch(/^\[JSONRPC\] .*; \[HTTP\+JSON\] /);
      const skipped = report.results.filter((r) => r.status === 'skip').map((r) => r.id);
      expect(skipped).toEqual(breakage.alsoSkips ?? []);
    },
    60_000,
  );
});

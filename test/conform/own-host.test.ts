import { afterAll, describe, expect, it } from 'vitest';
import { acmpChecks } from '../../src/conform/acmp/index.js';
import { runConformance } from '../../src/conform/runner.js';
import { cleanup } from '../helpers/cleanup.js';
import { startFixtureHost } from './fixture-agent.js';

afterAll(cleanup);

describe('the kit against our own host', () => {
  it('passes every ACMP check over JSON-RPC, HTTP+JSON and gRPC, nothing skipped on any', async () => {
    const host = await startFixtureHost();
    const report = await runConformance({ url: host.url, maxSpendCu: 1, only: acmpChecks.map((c) => c.id) });
    expect(report.results.map((r) => [r.id, r.status, r.evidence])).toEqual(
      acmpChecks.map((c) => [c.id, 'pass', undefined]),
    );
    expect(new Set(report.results.map((r) => r.transport))).toEqual(
      new Set([undefined, 'JSONRPC', 'HTTP+JSON', 'GRPC']),
    );
    // Three paid invokes per transport: the streamed one, its repeat, the cancelled one.
    expect(report.budget.reservedCu).toBe(0.009);
  }, 60_000);
});

import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { acmpChecks } from '../../src/conform/acmp/index.js';
import { runConformance } from '../../src/conform/runner.js';
import { cleanup } from '../helpers/cleanup.js';
import { startFixtureHost } from './fixture-agent.js';
import { startRewriteProxy } from './rewrite-proxy.js';

afterAll(cleanup);

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a transport the card lists but nothing answers (A2A v1.0 §5)', () => {
  it('fails every check over it, with the evidence, even with no budget; the others run as before', async () => {
    const host = await startFixtureHost();
    const grpc = `127.0.0.1:${await closedPort()}`;
    const rest = `http://127.0.0.1:${await closedPort()}/a2a/rest`;
    // The card names a silent gRPC port and a silent HTTP+JSON URL (in the v1.0 list and the v0.3 fields).
    const card = (c: Record<string, unknown>): Record<string, unknown> =>
      JSON.parse(JSON.stringify(c).replace(/http:\/\/127\.0\.0\.1:\d+\/a2a\/rest/g, rest)) as never;
    const silent = await startRewriteProxy(host.url, { card }, { [host.grpcUrl ?? '']: grpc });
    const report = await runConformance({
      url: silent.url,
      only: acmpChecks.map((c) => c.id),
      timeoutMs: 3000,
    });
    const wire = acmpChecks.filter((c) => c.transport !== undefined);
    const over = (t: string) => report.results.filter((r) => r.transport === t);
    expect(over('GRPC').map((r) => [r.id, r.status])).toEqual(
      wire.filter((c) => c.transport === 'GRPC').map((c) => [c.id, 'fail']),
    );
    for (const r of over('GRPC'))
      expect(r.evidence).toMatch(new RegExp(`^the card lists GRPC at ${grpc}, which did not answer: gRPC`));
    expect(over('HTTP+JSON').map((r) => r.status)).toEqual(over('HTTP+JSON').map(() => 'fail'));
    for (const r of over('HTTP+JSON'))
      expect(r.evidence).toMatch(
        /^the card lists HTTP\+JSON at .*, which did not answer: the connection failed/,
      );
    // JSON-RPC answers: its free checks pass, its paid ones skip for the budget of 0.
    expect(over('JSONRPC').filter((r) => r.status === 'fail')).toEqual([]);
    expect(over('JSONRPC').find((r) => r.id === 'acmp-a2a-budget-exceeded')?.status).toBe('pass');
    expect(report.results.filter((r) => !r.transport).map((r) => r.status)).not.toContain('fail');
  }, 60_000);
});

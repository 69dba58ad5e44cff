import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { pass, type Check } from '../../src/conform/check.js';
import { runConformance } from '../../src/conform/runner.js';
import { cleanup, shared } from '../helpers/cleanup.js';
import { startTestHost } from '../helpers/host.js';
import { startFixtureHost } from './fixture-agent.js';

afterAll(cleanup);

const host = shared(() => startFixtureHost());

/** The ids of a report's results with a status. */
const ids = (report: Awaited<ReturnType<typeof runConformance>>, status: string): string[] =>
  report.results.filter((r) => r.status === status).map((r) => r.id);

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const check = (id: string, run: Check['run']): Check => ({
  id,
  binding: 'a2a',
  title: id,
  spec: 'test',
  run,
});

describe('runConformance: the budget (docs/conformance.md "Budget")', () => {
  it('runs only the checks that cannot spend with the default budget of 0', async () => {
    const report = await runConformance({ url: host().url });
    expect(report.budget).toEqual({ maxSpendCu: 0, reservedCu: 0 });
    expect(ids(report, 'fail')).toEqual([]);
    expect(ids(report, 'pass')).toContain('acmp-a2a-budget-exceeded');
    const proof = report.results.find((r) => r.id === 'acmp-a2a-proof');
    expect(proof).toMatchObject({
      status: 'skip',
      evidence: expect.stringMatching(/needs 0\.001 CU .*--max-spend/) as string,
    });
  });

  it('reserves the price the agent named in its -33001 refusal, once per paid invoke', async () => {
    const report = await runConformance({ url: host().url, maxSpendCu: 0.0025 });
    // Reserved in report order: the streamed invoke over JSON-RPC, then over HTTP+JSON; neither the one
    // over gRPC nor the cancelled invokes fit any more.
    const result = (id: string) => report.results.find((r) => r.id === id);
    expect(report.budget.reservedCu).toBe(0.002);
    expect(result('acmp-a2a-proof')).toMatchObject({ status: 'pass', transport: 'JSONRPC' });
    expect(result('acmp-a2a-proof-rest')).toMatchObject({ status: 'pass', transport: 'HTTP+JSON' });
    const tooSmall = 'needs 0.001 CU of budget (--max-spend) for a paid invoke of tick';
    expect(result('acmp-a2a-proof-grpc')).toMatchObject({ status: 'skip', evidence: tooSmall });
    for (const id of ['acmp-a2a-cancel', 'acmp-a2a-cancel-rest', 'acmp-a2a-cancel-grpc'])
      expect(result(id)).toMatchObject({ status: 'skip', evidence: tooSmall });
    expect(result('acmp-a2a-idempotent')?.evidence).toContain('needs another 0.001 CU');
  });
});

describe('runConformance: agents that cannot be checked', () => {
  it('reports an unreachable agent without throwing, every check skipped', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const report = await runConformance({ url, timeoutMs: 2000 });
    expect(report.agent).toMatchObject({
      url,
      card: 'unreachable',
      problem: expect.stringContaining('failed') as string,
    });
    expect(report.summary.skip).toBe(report.summary.total);
  });

  it('skips the ACMP checks of a card without the ACMP extension, naming it', async () => {
    const plain = await startTestHost();
    const report = await runConformance({ url: plain.url, only: ['acmp-a2a-card-params'] });
    expect(report.results).toMatchObject([
      {
        id: 'acmp-a2a-card-params',
        status: 'skip',
        evidence: expect.stringContaining('https://a2agora.org/acmp/v0.1') as string,
      },
    ]);
  });

  it('skips the invoke checks when --capability names no skill of the card', async () => {
    const only = ['acmp-a2a-budget-exceeded', 'acmp-a2a-budget-exceeded-grpc'];
    const report = await runConformance({ url: host().url, acmpCapability: 'nope', only });
    expect(report.results.map((r) => [r.status, r.evidence])).toEqual([
      ['skip', 'the card lists no ACMP skill "nope" with an example input'],
      ['skip', 'the card lists no ACMP skill "nope" with an example input'],
    ]);
  });

  it('refuses an unknown check id before calling the agent', async () => {
    await expect(runConformance({ url: host().url, only: ['no-such-check'] })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    });
  });
});

describe('runConformance: a host that asks for a bearer token', () => {
  const TOKEN = 'conform-token-0123456789abcdef';
  const tokenHost = shared(() => startFixtureHost({ token: [TOKEN] }));
  const only = ['acmp-a2a-card-params', 'acmp-a2a-budget-exceeded', 'acmp-a2a-budget-exceeded-grpc'];

  it('presents --token on every call over every transport (the card is public)', async () => {
    const report = await runConformance({ url: tokenHost().url, token: TOKEN, only });
    expect(report.results.map((r) => r.status)).toEqual(['pass', 'pass', 'pass']);
  });

  it('reports the refusal as the evidence without one', async () => {
    const report = await runConformance({ url: tokenHost().url, only });
    expect(report.results.slice(1)).toMatchObject([
      { status: 'fail', evidence: expect.stringContaining('HTTP 401') as string },
      { status: 'fail', evidence: expect.stringContaining('gRPC UNAUTHENTICATED (16)') as string },
    ]);
  });
});

describe('runConformance: one check at a time', () => {
  it('reports a check that throws as a fail with the reason', async () => {
    const boom = check('boom', () => Promise.reject(new Error('kaput')));
    const report = await runConformance({
      url: host().url,
      checks: [boom, check('fine', () => Promise.resolve(pass()))],
    });
    expect(report.results.map((r) => [r.id, r.status, r.evidence])).toEqual([
      ['boom', 'fail', 'the check could not complete: Error: kaput'],
      ['fine', 'pass', undefined],
    ]);
  });

  it('fails a check that outlives its deadline', async () => {
    const hang = check('hang', () => new Promise(() => undefined));
    const report = await runConformance({ url: host().url, checks: [hang], checkTimeoutMs: 50 });
    expect(report.results[0]).toMatchObject({ status: 'fail', evidence: 'no outcome within 50 ms' });
  });
});

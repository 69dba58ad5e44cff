import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { resolveHostConfig } from '../../src/server/config.js';
import { isLocalError } from '../../src/shared/errors.js';
import { cleanup } from '../helpers/host.js';
import { sample, scrape, scrapeUntil } from '../helpers/metrics.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { rawHttp } from '../helpers/sockets.js';
import { acmpHost, countingCapability } from '../acmp/helpers.js';
import { sessionHost } from '../acmp/session-helpers.js';
import { escrowHost } from '../escrow/helpers.js';

afterEach(cleanup);

describe('--metrics-port and the process metrics (docs/operations.md "Metrics")', () => {
  it('serves /metrics on its own plain-HTTP port and no longer on the main one', async () => {
    const host = await acmpHost({
      capabilities: [countingCapability('count-runs', 5)],
      flags: { 'metrics-port': '0' },
    });
    expect(host.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    await buyer.invoke({ capability: 'count-runs', input: { type: 'text', data: 'x' } });
    expect((await fetch(`${host.url}/metrics`)).status).toBe(404);
    const text = await scrape(host.metricsUrl!);
    expect(sample(text, 'acmp_invokes_total', { capability: 'count-runs', outcome: 'result' })).toBe(1);
    // The refused scrape on the main port counts as a request there; nothing on the metrics port does.
    expect(
      sample(text, 'a2a_commerce_requests_total', {
        binding: 'http',
        method: 'GET',
        outcome: 'client_error',
      }),
    ).toBe(1);
    expect((await fetch(host.metricsUrl!.replace('/metrics', '/'))).status).toBe(404);
  });

  it('keeps the scrape token and the Host check on the metrics port', async () => {
    const host = await acmpHost({ flags: { 'metrics-port': '0', 'metrics-token': 'scrape-secret-0123' } });
    const url = host.metricsUrl!;
    expect((await fetch(url)).status).toBe(401);
    await scrape(url, { headers: { authorization: 'Bearer scrape-secret-0123' } });
    const foreign = await rawHttp(url, {
      headers: { host: 'attacker.example', authorization: 'Bearer scrape-secret-0123' },
    });
    expect(foreign.status).toBe(403);
  });

  it('adds process_* and nodejs_* by default; --no-process-metrics leaves them out', async () => {
    const on = await acmpHost();
    const off = await acmpHost({ flags: { 'no-process-metrics': true } });
    const withProcess = await scrape(on.url);
    expect(withProcess).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(withProcess).toMatch(/^nodejs_eventloop_lag_seconds /m);
    const without = await scrape(off.url);
    expect(without).not.toMatch(/^(process|nodejs)_/m);
    expect(without).toMatch(/^acmp_invokes_total|# TYPE acmp_invokes_total counter/m);
  });

  it('refuses a metrics port that is the main port, and --metrics-host without a port (CONFIG_INVALID)', () => {
    const refused = (flags: Parameters<typeof resolveHostConfig>[0], env = {}): unknown => {
      try {
        resolveHostConfig(flags, env);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    for (const error of [
      refused({ port: '9000', 'metrics-port': '9000' }),
      refused({ 'metrics-host': '0.0.0.0' }),
      refused({}, { A2AC_METRICS_PORT: 'many' }),
      refused({}, { A2AC_PROCESS_METRICS: 'perhaps' }),
    ])
      expect(isLocalError(error) && error.code === 'CONFIG_INVALID').toBe(true);
    const config = resolveHostConfig({}, { A2AC_METRICS_PORT: '9464', A2AC_PROCESS_METRICS: 'false' });
    expect(config.metrics).toMatchObject({ port: 9464, process: false, host: undefined });
  });
});

describe.skipIf(!process.env.TEST_PG_URL)(
  'PostgreSQL notification lag (docs/operations.md "Metrics")',
  () => {
    it('times a probe on each LISTEN channel of the host, from NOTIFY to its listener', async () => {
      const db = await freshPgDatabase();
      const { host } = await sessionHost({ db });
      const agent = await escrowHost({ db, migrate: true });
      const lag = 'a2a_commerce_pg_notification_lag_seconds';
      for (const [url, channel] of [
        [host.url, 'acmp_task_signals'],
        [host.url, 'acmp_session_signals'],
        [agent.host.url, 'escrow_signals'],
      ] as const) {
        // The first probe goes out right after LISTEN, the next only 10 s later.
        const text = await scrapeUntil(url, { name: `${lag}_count`, labels: { channel }, value: 1 });
        expect(sample(text, `${lag}_count`, { channel })).toBe(1);
        const seconds = sample(text, `${lag}_sum`, { channel });
        expect(seconds).toBeGreaterThan(0);
        expect(seconds).toBeLessThan(10);
      }
      // Each host times only its own probes: the session host has no escrow listener, and a second host
      // on the same channel hears the first one's probes without timing them (nor the first its).
      expect(sample(await scrape(host.url), `${lag}_count`, { channel: 'escrow_signals' })).toBe(0);
      const second = (await sessionHost({ db, migrate: false })).host;
      const channel = { channel: 'acmp_task_signals' };
      await scrapeUntil(second.url, { name: `${lag}_count`, labels: channel, value: 1 });
      expect(sample(await scrape(second.url), `${lag}_count`, channel)).toBe(1);
      expect(sample(await scrape(host.url), `${lag}_count`, channel)).toBe(1);
    });
  },
);

import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { GRPC_SERVICE_NAMES } from '../../src/a2a/host/grpc-front.js';
import { HealthService, SERVING_STATUS } from '../../src/a2a/host/grpc-health.js';
import type { HostFlags } from '../../src/server/config.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { codeOf } from '../acmp/helpers.js';
import { probeCapability } from '../helpers/acmp-testing.js';
import { cleanup, startTestHost } from '../helpers/host.js';

afterEach(cleanup);

/** The host's drain before a stop (docs/operations.md "Health, readiness and shutdown"). */

const RawHealth = grpc.makeGenericClientConstructor(HealthService, 'Health');

function check(client: grpc.Client, service: string): Promise<number> {
  const call = (
    client as unknown as {
      check: (r: unknown, cb: (e: grpc.ServiceError | null, r: { status: number }) => void) => void;
    }
  ).check.bind(client);
  return new Promise((resolve, reject) =>
    call({ service }, (error, response) => (error ? reject(error) : resolve(response.status))),
  );
}

const GATED = { capability: 'gated', input: { type: 'text', data: 'x' }, max_price_cu: 1 } as const;

/** A host whose `gated` capability runs until the test releases it, with one invoke running. */
async function hostWithRunningTask(flags: HostFlags = {}) {
  const gated = probeCapability('gated');
  const host = await startTestHost({
    flags: { 'shutdown-grace-ms': '30000', ...flags },
    modules: [acmpModule({ capabilities: [gated] })],
  });
  const buyer = await createAcmpBuyer({ agentUrl: host.url, retries: 0 });
  const running = buyer.invoke(GATED);
  await vi.waitFor(() => expect(gated.runs).toBe(1), { timeout: 10_000, interval: 10 });
  return { host, gated, buyer, running };
}

describe('RunningHost.drain()', () => {
  it('turns /readyz 503 draining at once, /healthz stays 200', async () => {
    const { host, gated, running } = await hostWithRunningTask();
    const drained = host.drain();
    const res = await fetch(`${host.url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.headers.get('connection')).toBe('close');
    expect(await res.json()).toEqual({
      status: 'not_ready',
      checks: { database: 'ok', listen: 'none', draining: 'yes' },
    });
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
    gated.release();
    await running;
    await drained;
  });

  it('lets a running task finish and its result reach the buyer', async () => {
    const { host, gated, running } = await hostWithRunningTask();
    const drained = host.drain();
    let done = false;
    void drained.then(() => (done = true));
    // The drain waits for the task: it has not ended while the task runs.
    expect((await fetch(`${host.url}/readyz`)).status).toBe(503);
    expect(done).toBe(false);
    gated.release();
    const result = await running;
    expect(result.output).toEqual({ type: 'text', data: 'echo:x' });
    await drained;
    await host.close();
  });

  it('refuses a new invoke with -33099 draining (retryable elsewhere), nothing run', async () => {
    const { host, gated, buyer, running } = await hostWithRunningTask();
    const drained = host.drain();
    const refused = await codeOf(buyer.invoke(GATED));
    expect(refused).toMatchObject({ code: -33099, data: { reason: 'draining' } });
    expect(Object.keys(refused.data).sort()).toEqual(['reason', 'task_id']);
    expect(gated.runs).toBe(1);
    gated.release();
    await running;
    await drained;
  });

  it('gives up on a task still running after the grace, and close() then ends it', async () => {
    const { host, running } = await hostWithRunningTask({ 'shutdown-grace-ms': '50' });
    const outcome = codeOf(running);
    await host.drain();
    await host.close();
    // The task's connection is cut once the close has given open responses their last second.
    expect(await outcome).toMatchObject({ code: -33099 });
  });

  it('waits the drain delay as not-ready before refusing new work', async () => {
    const { host, gated, buyer, running } = await hostWithRunningTask({ 'drain-delay-ms': '600000' });
    void host.drain();
    expect((await fetch(`${host.url}/readyz`)).status).toBe(503);
    // Within the delay new work is still taken (the balancer may not have seen the 503 yet).
    const second = buyer.invoke(GATED);
    await vi.waitFor(() => expect(gated.runs).toBe(2), { timeout: 10_000, interval: 10 });
    gated.release();
    await running;
    await second;
    // close() during the delay cuts it short instead of waiting it out.
    await host.close();
  });
});

describe('gRPC health during a drain (grpc.health.v1)', () => {
  it('answers NOT_SERVING for the server and both A2A services while draining', async () => {
    const { host, gated, running } = await hostWithRunningTask({ 'grpc-port': '0' });
    const health = new RawHealth(host.grpcUrl!, grpc.credentials.createInsecure());
    expect(await check(health, '')).toBe(SERVING_STATUS.SERVING);
    const drained = host.drain();
    for (const service of ['', GRPC_SERVICE_NAMES.v1, GRPC_SERVICE_NAMES.v03])
      expect(await check(health, service)).toBe(SERVING_STATUS.NOT_SERVING);
    health.close();
    gated.release();
    await running;
    await drained;
  });

  it('tells an open watch NOT_SERVING when the drain starts', async () => {
    const { host, gated, running } = await hostWithRunningTask({ 'grpc-port': '0' });
    const health = new RawHealth(host.grpcUrl!, grpc.credentials.createInsecure());
    const watch = (
      health as unknown as { watch: (r: unknown) => grpc.ClientReadableStream<{ status: number }> }
    ).watch({ service: '' });
    const statuses: number[] = [];
    watch.on('data', (r: { status: number }) => statuses.push(r.status));
    watch.on('error', () => undefined);
    await vi.waitFor(() => expect(statuses).toEqual([SERVING_STATUS.SERVING]), { timeout: 10_000 });
    const drained = host.drain();
    await vi.waitFor(() => expect(statuses).toEqual([SERVING_STATUS.SERVING, SERVING_STATUS.NOT_SERVING]), {
      timeout: 10_000,
    });
    watch.cancel();
    health.close();
    gated.release();
    await running;
    await drained;
  });
});

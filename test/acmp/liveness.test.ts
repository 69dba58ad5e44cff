import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import { cleanup } from '../helpers/host.js';
import { providerProcess } from '../helpers/provider-process.js';

afterEach(cleanup);

const HEARTBEAT_MS = 200;
const LIVENESS_MS = 3 * HEARTBEAT_MS;
const TIMEOUT_MS = 30_000;
function killed(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve(Date.now()));
    child.kill('SIGKILL');
  });
}

describe('liveness window (Layer 1 §3.6): a provider killed mid-stream', () => {
  it('makes the buyer fail with -33003 within 3 × heartbeat_interval_ms of its last sign of life', async () => {
    const { url, child } = await providerProcess({ heartbeatMs: HEARTBEAT_MS });
    const buyer = await createAcmpBuyer({ agentUrl: url });
    expect(buyer.capabilityObject.features.heartbeat_interval_ms).toBe(HEARTBEAT_MS);
    let lastSign = 0;
    let killedAt: Promise<number> | undefined;
    const failure = await (async () => {
      try {
        const events = buyer.stream({
          capability: 'slow-count',
          input: { type: 'json', data: { n: 10_000 } },
          max_price_cu: 2,
          timeout_ms: TIMEOUT_MS,
        });
        for await (const event of events) {
          lastSign = Date.now();
          if (event.kind === 'heartbeat' && !killedAt) killedAt = killed(child);
        }
        return undefined;
      } catch (error) {
        return { error, at: Date.now() };
      }
    })();
    expect(killedAt).toBeDefined();
    const killTime = await killedAt!;
    expect(failure?.error).toBeInstanceOf(AcmpError);
    expect((failure!.error as AcmpError).code).toBe(-33003);
    expect((failure!.error as AcmpError).data).toMatchObject({ reason: 'liveness' });
    expect(failure!.at).toBeGreaterThanOrEqual(killTime);
    // The window counts from the last sign of life (slack for timers on a busy machine), far before timeout_ms.
    expect(failure!.at - lastSign).toBeLessThan(LIVENESS_MS + 1000);
    expect(failure!.at - killTime).toBeLessThan(TIMEOUT_MS / 10);
  });
});

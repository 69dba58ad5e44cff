import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { GRPC_SERVICE_NAMES } from '../../src/a2a/host/grpc-front.js';
import { HealthService, SERVING_STATUS } from '../../src/a2a/host/grpc-health.js';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import type { HostFlags } from '../../src/server/config.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { acmpMessage, invokeRoot } from '../acmp/helpers.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { sdkMessage } from '../helpers/transports.js';

afterEach(cleanup);

/** The operator's side of the gRPC interface (docs/host.md "gRPC"): retries, health, graceful shutdown. */

const ALICE = 'alice-secret-0123456789abcdef';
const BOB = 'bobby-secret-0123456789abcdef';
const GRPC: HostFlags = { 'grpc-port': '0' };
const RawHealth = grpc.makeGenericClientConstructor(HealthService, 'Health');

function check(
  client: grpc.Client,
  service: string,
): Promise<{ response?: unknown; error?: grpc.ServiceError }> {
  const call = (
    client as unknown as {
      check: (r: unknown, cb: (e: grpc.ServiceError | null, r: unknown) => void) => void;
    }
  ).check.bind(client);
  return new Promise((resolve) =>
    call({ service }, (error, response) => resolve(error ? { error } : { response })),
  );
}

describe('the buyer over gRPC', () => {
  it('treats UNAVAILABLE as a transport failure it retries (-33099 transport_failed), not a refusal', async () => {
    const host = await startTestHost({
      flags: GRPC,
      modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 1 }) })],
    });
    const card = await fetchAgentCard(host.url);
    await host.close();
    const buyer = await createAcmpBuyer({ card, transport: 'GRPC', retries: 2, retryDelayMs: 1 });
    await expect(
      buyer.invoke({ capability: 'sentiment-analysis', input: { type: 'text', data: 'x' }, max_price_cu: 1 }),
    ).rejects.toMatchObject({
      code: -33099,
      data: { reason: 'transport_failed' },
    });
  });

  it('fails at once with REFUSED on UNAUTHENTICATED', async () => {
    const host = await startTestHost({
      flags: { ...GRPC, token: [`alice=${ALICE}`] },
      modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 1 }) })],
    });
    const buyer = await createAcmpBuyer({ agentUrl: host.url, transport: 'GRPC', token: BOB });
    await expect(
      buyer.invoke({ capability: 'sentiment-analysis', input: { type: 'text', data: 'x' }, max_price_cu: 1 }),
    ).rejects.toMatchObject({ code: 'REFUSED' });
  });
});

describe('health and shutdown (grpc.health.v1)', () => {
  it('answers SERVING for the server and both A2A services, NOT_FOUND for others', async () => {
    const host = await startTestHost({ flags: GRPC });
    const health = new RawHealth(host.grpcUrl!, grpc.credentials.createInsecure());
    for (const service of ['', GRPC_SERVICE_NAMES.v1, GRPC_SERVICE_NAMES.v03]) {
      expect(await check(health, service)).toEqual({ response: { status: SERVING_STATUS.SERVING } });
    }
    expect((await check(health, 'nope')).error?.code).toBe(grpc.status.NOT_FOUND);
  });

  it('turns NOT_SERVING on close, lets a call in flight finish, and cancels a stream still open after the grace', async () => {
    let stop = (): void => {};
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    // Streams until the test stops it: the call the grace must cut.
    const endless: AcmpCapability = {
      id: 'endless',
      price: 0,
      async *handler(_input, ctx) {
        for (let i = 0; ; i++) {
          yield { type: 'text', data: `tick ${i} ` };
          const timer = new Promise((resolve) => setTimeout(resolve, 10));
          if ((await Promise.race([timer, stopped.then(() => 'stop')])) === 'stop' || ctx.signal.aborted)
            return;
        }
      },
    };
    const host = await startTestHost({
      flags: GRPC,
      grpcGraceMs: 500,
      modules: [acmpModule({ capabilities: [endless, ...demoCapabilities({ stepMs: 30 })] })],
    });
    const health = new RawHealth(host.grpcUrl!, grpc.credentials.createInsecure());
    const watch = (
      health as unknown as { watch: (r: unknown) => grpc.ClientReadableStream<{ status: number }> }
    ).watch({ service: '' });
    const statuses: number[] = [];
    const watched = new Promise<void>((resolve) => {
      watch.on('data', (r: { status: number }) => statuses.push(r.status));
      watch.on('end', resolve);
      watch.on('error', () => resolve());
    });
    const client = await createA2AClient(await fetchAgentCard(host.url), { transport: 'GRPC' });
    const options = { serviceParameters: { 'A2A-Extensions': ACMP_EXTENSION_URI } };
    const open = (root: ReturnType<typeof invokeRoot>) =>
      client.sendMessageStream(
        { tenant: '', message: sdkMessage(acmpMessage(root)), configuration: undefined, metadata: undefined },
        options,
      );
    const endlessStream = open(invokeRoot({ capability: 'endless', stream: true, max_price_cu: 1 }));
    // slow-count: 5 steps of 30 ms, well inside the grace.
    const slowStream = open(
      invokeRoot({ capability: 'slow-count', input: { type: 'json', data: { n: 5 } }, max_price_cu: 1 }),
    );
    await endlessStream.next();
    await slowStream.next();
    const read = async (stream: typeof slowStream) => {
      const events: unknown[] = [];
      try {
        for (let step = await stream.next(); !step.done; step = await stream.next()) events.push(step.value);
        return { events };
      } catch (error) {
        return { events, error, at: Date.now() };
      }
    };
    const slow = read(slowStream);
    const cut = read(endlessStream).finally(stop);
    const closing = Date.now();
    await host.close();
    const slowOutcome = await slow;
    expect(slowOutcome.error).toBeUndefined();
    expect(JSON.stringify(slowOutcome.events)).toContain('acmp_result');
    const cutOutcome = await cut;
    expect(cutOutcome.error).toBeInstanceOf(Error);
    expect(cutOutcome.at! - closing).toBeGreaterThanOrEqual(450);
    await watched;
    expect(statuses).toEqual([SERVING_STATUS.SERVING, SERVING_STATUS.NOT_SERVING]);
  });
});

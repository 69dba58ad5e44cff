import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { HealthService, SERVING_STATUS } from '../../src/a2a/host/grpc-health.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import type { HostFlags } from '../../src/server/config.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { createPlainTask } from '../helpers/a2a.js';
import { cleanup, onCleanup, startTestHost } from '../helpers/host.js';
import { addressOf, holdSocket, within, type HeldSocket } from '../helpers/sockets.js';

afterEach(cleanup);

/** Small gRPC limits, so idle and half-open sockets must be gone in about a second. */
const SHORT: HostFlags = {
  'grpc-port': '0',
  'headers-timeout-ms': '500',
  'grpc-keepalive-ms': '500',
  'grpc-keepalive-timeout-ms': '500',
  'grpc-idle-timeout-ms': '1000',
};
const SLACK_MS = 1000;
/** The HTTP/2 client connection preface (RFC 9113 §3.4) followed by an empty SETTINGS frame. */
const PREFACE = Buffer.concat([
  Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
]);

const RawHealth = grpc.makeGenericClientConstructor(HealthService, 'Health');

function healthClient(target: string, credentials = grpc.credentials.createInsecure()): grpc.Client {
  const client = new RawHealth(target, credentials);
  onCleanup(() => client.close());
  return client;
}

/** One health Check: the status, or the gRPC error code. */
function check(client: grpc.Client): Promise<number> {
  const call = (
    client as unknown as {
      check: (
        r: unknown,
        o: unknown,
        cb: (e: grpc.ServiceError | null, r?: { status: number }) => void,
      ) => void;
    }
  ).check.bind(client);
  return new Promise((resolve) =>
    call({ service: '' }, { deadline: Date.now() + 2000 }, (error, response) =>
      resolve(error ? -error.code : (response?.status ?? -1)),
    ),
  );
}

/** Health-checks every 50 ms until `until` settles; resolves with every answer. */
async function checkThroughout(client: grpc.Client, until: Promise<unknown>): Promise<number[]> {
  const answers: number[] = [];
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    answers.push(await check(client));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return answers;
}

function holdMany(n: number, open: () => Promise<HeldSocket>): Promise<HeldSocket[]> {
  return Promise.all(Array.from({ length: n }, open));
}

describe('idle and half-open gRPC connections (docs/host.md "Connections")', () => {
  it('closes silent sockets and preface-only connections within the configured time while calls succeed', async () => {
    const host = await startTestHost({ flags: SHORT });
    const at = addressOf(host.grpcUrl!);
    const silent = await holdMany(20, () => holdSocket(at));
    const prefaceOnly = await holdMany(20, () => holdSocket(at, (s) => s.write(PREFACE)));
    const all = Promise.all([...silent, ...prefaceOnly].map((s) => s.closed));
    const answers = checkThroughout(healthClient(host.grpcUrl!), all);
    const lifetimes = await within(all, 1000 + SLACK_MS + 1000, 'half-open gRPC sockets closed');
    expect(Math.max(...lifetimes)).toBeLessThan(1000 + SLACK_MS);
    const seen = await answers;
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.every((s) => s === SERVING_STATUS.SERVING)).toBe(true);
    const client = await createA2AClient(await fetchAgentCard(host.url), { transport: 'GRPC' });
    expect(await createPlainTask(client)).toEqual(expect.any(String));
  });

  it('closes sockets that never finish the TLS handshake within the headers timeout', async () => {
    const host = await startTestHost({ flags: { ...SHORT, 'tls-self-signed': true } });
    const at = addressOf(host.grpcUrl!);
    const silent = await holdMany(10, () => holdSocket(at));
    // More bytes than the first-bytes check asks for, but a record the handshake never completes.
    const partialHello = await holdMany(10, () =>
      holdSocket(at, (s) =>
        s.write(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]), Buffer.alloc(40, 1)])),
      ),
    );
    const all = Promise.all([...silent, ...partialHello].map((s) => s.closed));
    const tls = grpc.credentials.createSsl(Buffer.from(host.tls!.cert));
    const answers = checkThroughout(healthClient(host.grpcUrl!, tls), all);
    const lifetimes = await within(all, 500 + SLACK_MS + 1000, 'TLS sockets without a handshake closed');
    expect(Math.max(...lifetimes)).toBeLessThan(500 + SLACK_MS);
    expect((await answers).every((s) => s === SERVING_STATUS.SERVING)).toBe(true);
  });
});

describe('long gRPC streams under the short limits', () => {
  it('streams SendStreamingMessage for over twice the idle and first-bytes limits', async () => {
    const host = await startTestHost({
      flags: SHORT,
      modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 100 }) })],
    });
    const buyer = await createAcmpBuyer({ agentUrl: host.url, transport: 'GRPC' });
    const started = Date.now();
    const kinds: string[] = [];
    const input = { type: 'json' as const, data: { n: 25 } };
    for await (const event of buyer.stream({
      capability: 'slow-count',
      input,
      max_price_cu: 1,
      stream: true,
    }))
      kinds.push(event.kind);
    expect(Date.now() - started).toBeGreaterThan(2000);
    expect(kinds.at(-1)).toBe('result');
  });
});

describe('the gRPC connection cap (--max-connections)', () => {
  it('closes connections beyond the cap at once and serves again when one ends', async () => {
    const host = await startTestHost({ flags: { 'grpc-port': '0', 'max-connections': '5' } });
    const at = addressOf(host.grpcUrl!);
    const held = await holdMany(5, () => holdSocket(at));
    const excess = await holdSocket(at);
    expect(await within(excess.closed, 2000, 'the 6th connection closed')).toBeLessThan(2000);
    expect(excess.answered()).toBe(false);
    for (const socket of held) socket.socket.destroy();
    await Promise.all(held.map((s) => s.closed));
    // The server learns of the closes asynchronously: a fresh channel per try, none waits out a backoff.
    let status = 0;
    for (let i = 0; i < 20 && status !== SERVING_STATUS.SERVING; i++) {
      status = await check(healthClient(host.grpcUrl!));
      if (status !== SERVING_STATUS.SERVING) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(status).toBe(SERVING_STATUS.SERVING);
  });
});

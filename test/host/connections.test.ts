import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { connectMcpAcmpBuyer } from '../../src/mcp/buyer.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { fetchTrusting } from '../../src/shared/fetch.js';
import { freshSnapshot, startAcpHost, txId } from '../acpspec/helpers.js';
import { anonymousState, eventOp, producer } from '../helpers/acp-builders.js';
import { cleanup, onCleanup, startTestHost } from '../helpers/host.js';
import { addressOf, dribble, holdSocket, within, type HeldSocket } from '../helpers/sockets.js';

afterEach(cleanup);

/** Small limits, so slow sockets must be gone in about a second (docs/host.md "Connections"). */
const SHORT = { 'headers-timeout-ms': '500', 'request-timeout-ms': '1000' } as const;
/** Node checks the timeouts on an interval; the deadline a slow socket must be closed by. */
const SLACK_MS = 1000;

/** GETs the card every 50 ms until `until` settles; resolves with the statuses seen. */
async function serveThroughout(url: string, until: Promise<unknown>): Promise<number[]> {
  const statuses: number[] = [];
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    const res = await fetch(`${url}/.well-known/agent-card.json`);
    await res.arrayBuffer();
    statuses.push(res.status);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return statuses;
}

async function holdMany(n: number, open: () => Promise<HeldSocket>): Promise<HeldSocket[]> {
  return Promise.all(Array.from({ length: n }, open));
}

describe('slow and idle HTTP connections (docs/host.md "Connections")', () => {
  it('closes slowloris sockets (idle, dribbled headers) within the headers timeout while serving others', async () => {
    const host = await startTestHost({ flags: SHORT });
    const at = addressOf(host.url);
    const idle = await holdMany(20, () => holdSocket(at));
    const dribbling = await holdMany(20, () =>
      holdSocket(at, (s) => {
        s.write('GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\n');
        dribble('X-Slow: 1\r\n', 100)(s);
      }),
    );
    const all = Promise.all([...idle, ...dribbling].map((s) => s.closed));
    const served = serveThroughout(host.url, all);
    const lifetimes = await within(all, 500 + SLACK_MS + 1000, 'slowloris sockets closed');
    expect(Math.max(...lifetimes)).toBeLessThan(500 + SLACK_MS);
    const statuses = await served;
    expect(statuses.length).toBeGreaterThan(3);
    expect(statuses.every((s) => s === 200)).toBe(true);
  });

  it('closes a request whose body dribbles in within the request timeout', async () => {
    const host = await startTestHost({ flags: SHORT });
    const slow = await holdMany(10, () =>
      holdSocket(addressOf(host.url), (s) => {
        s.write(
          'POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
        );
        dribble(' ', 100)(s);
      }),
    );
    const all = Promise.all(slow.map((s) => s.closed));
    const served = serveThroughout(host.url, all);
    const lifetimes = await within(all, 1000 + SLACK_MS + 1000, 'slow-body sockets closed');
    expect(Math.max(...lifetimes)).toBeLessThan(1000 + SLACK_MS);
    expect((await served).every((s) => s === 200)).toBe(true);
  });

  it('closes HTTPS sockets that never finish the TLS handshake within the headers timeout', async () => {
    const host = await startTestHost({ flags: { ...SHORT, 'tls-self-signed': true } });
    const at = addressOf(host.url);
    // A TLS record header announcing more bytes than ever come.
    const stalled = await holdMany(10, () =>
      holdSocket(at, (s) =>
        s.write(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]), Buffer.alloc(40, 1)])),
      ),
    );
    const silent = await holdMany(10, () => holdSocket(at));
    const all = Promise.all([...stalled, ...silent].map((s) => s.closed));
    const lifetimes = await within(all, 500 + SLACK_MS + 1000, 'HTTPS sockets without a handshake closed');
    expect(Math.max(...lifetimes)).toBeLessThan(500 + SLACK_MS);
    const res = await fetchTrusting(host.tls!.cert)(`${host.url}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
  });
});

describe('the connection cap (--max-connections)', () => {
  it('closes connections beyond the cap at once and serves again when one ends', async () => {
    const host = await startTestHost({ flags: { 'max-connections': '10' } });
    const at = addressOf(host.url);
    const held = await holdMany(10, () => holdSocket(at));
    const excess = await holdSocket(at);
    expect(await within(excess.closed, 2000, 'the 11th connection closed')).toBeLessThan(2000);
    expect(excess.answered()).toBe(false);
    await expect(fetch(`${host.url}/.well-known/agent-card.json`)).rejects.toThrow();
    held[0]!.socket.destroy();
    await held[0]!.closed;
    // The server learns of the close asynchronously: the next request is served once it has.
    let status = 0;
    for (let i = 0; i < 20 && status !== 200; i++) {
      status = await fetch(`${host.url}/.well-known/agent-card.json`, { headers: { connection: 'close' } })
        .then((r) => r.status)
        .catch(() => 0);
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(status).toBe(200);
  });
});

describe('long-lived streams are not cut by the request timeout', () => {
  const slowCount = { capability: 'slow-count', input: { type: 'json' as const, data: { n: 25 } } };

  async function acmpHost() {
    return startTestHost({
      flags: SHORT,
      modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 100 }) })],
    });
  }

  it('streams SendStreamingMessage (SSE) for over twice the request timeout', async () => {
    const host = await acmpHost();
    const buyer = await createAcmpBuyer({ agentUrl: host.url, transport: 'JSONRPC' });
    const started = Date.now();
    const kinds: string[] = [];
    for await (const event of buyer.stream({ ...slowCount, max_price_cu: 1, stream: true }))
      kinds.push(event.kind);
    expect(Date.now() - started).toBeGreaterThan(2000);
    expect(kinds.at(-1)).toBe('result');
  });

  it('follows an ACPspec event stream (SSE) past twice the request timeout', async () => {
    const host = await startAcpHost({ flags: { ...SHORT, 'tls-self-signed': true } });
    const client = await createAcpClient({ agentUrl: host.url, caCert: host.caCert });
    const lead = freshSnapshot(txId('follow'), anonymousState());
    await client.send(lead);
    const stop = new AbortController();
    onCleanup(() => stop.abort());
    const seen: string[] = [];
    for await (const event of host.http.follow(lead.transaction_id, { signal: stop.signal })) {
      seen.push(event.event_id);
      if (seen.length === 1) {
        // The stream has been open for more than twice the request timeout when the next event comes.
        setTimeout(() => void client.sendDelta(lead.transaction_id, [eventOp('ev-late')], producer()), 2200);
      } else break;
    }
    stop.abort();
    expect(seen).toEqual(['ev-lead-1', 'ev-late']);
  });

  it('streams an MCP request (Streamable HTTP SSE) for over twice the request timeout', async () => {
    const host = await acmpHost();
    const buyer = await connectMcpAcmpBuyer({ endpoint: { url: `${host.url}/mcp` } });
    onCleanup(() => buyer.close());
    const started = Date.now();
    const result = await buyer.invoke({ ...slowCount, max_price_cu: 1 });
    expect(Date.now() - started).toBeGreaterThan(2000);
    expect(result).toMatchObject({ output: { data: { count: 25 } } });
  });
});

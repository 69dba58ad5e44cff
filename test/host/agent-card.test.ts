import { AgentCard } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { ClientFactory as ClientFactoryV03, A2AClient as A2AClientV03 } from 'a2a-sdk-v03/client';
import { afterEach, describe, expect, it } from 'vitest';
import { CARD_MAX_AGE_S } from '../../src/a2a/host/agent-card.js';
import { createPlainTask } from '../helpers/a2a.js';
import { cleanup, shared } from '../helpers/cleanup.js';
import { startTestHost } from '../helpers/host.js';

afterEach(cleanup);

// The tests read the card and send plain messages, which no other test looks at: one host for the
// file (the first test starts its own, with a token configured).
const theHost = shared(() => startTestHost());

const CARD_PATH = '/.well-known/agent-card.json';

async function getCard(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url + CARD_PATH, { headers });
}

/**
 * A revalidation as a cache sends it. `fetch` adds `Cache-Control: no-cache` to a conditional request that
 * sets none (Fetch "HTTP-network-or-cache fetch"), and a no-cache request is never answered 304.
 */
function revalidate(url: string, headers: Record<string, string>): Promise<Response> {
  return getCard(url, { 'Cache-Control': 'max-age=0', ...headers });
}

describe('the agent card over HTTP (A2A §3.6.2 versions, docs/host.md "The agent card")', () => {
  it('answers A2A-Version: 1.0 with the v1.0 card in canonical ProtoJSON', async () => {
    const host = await startTestHost({ flags: { token: ['alice=alice-secret-0123456789'] } });
    const res = await getCard(host.url, { 'A2A-Version': '1.0' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty('url');
    expect(body).not.toHaveProperty('protocolVersion');
    expect(body.supportedInterfaces).toContainEqual(
      expect.objectContaining({ protocolBinding: 'JSONRPC', protocolVersion: '1.0' }),
    );
    // Canonical: parsing and re-serialising with the SDK's own codec changes nothing.
    expect(AgentCard.toJSON(AgentCard.fromJSON(body))).toEqual(body);
  });

  it('answers a request without A2A-Version with the v0.3 card (an empty version means 0.3)', async () => {
    const host = theHost();
    const res = await getCard(host.url);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.protocolVersion).toMatch(/^0\.3/);
    expect(body.url).toBe(`${host.url}/a2a/jsonrpc`);
  });

  it.each([
    ['v1.0', { 'A2A-Version': '1.0' }],
    ['v0.3', {}],
  ])(
    'gives the %s card one max-age, an ETag, Last-Modified and Vary: A2A-Version',
    async (_shape, headers) => {
      const host = theHost();
      const res = await getCard(host.url, headers);
      expect(res.headers.get('cache-control')).toBe(`public, max-age=${CARD_MAX_AGE_S}`);
      expect(res.headers.get('etag')).toMatch(/^(W\/)?"[^"]+"$/);
      expect(new Date(res.headers.get('last-modified')!).getTime()).toBeLessThanOrEqual(Date.now());
      expect(res.headers.get('vary')).toMatch(/A2A-Version/i);
    },
  );

  it.each([
    ['v1.0', { 'A2A-Version': '1.0' }],
    ['v0.3', {}],
  ])(
    'answers the %s card 304 to If-None-Match with its ETag, and to If-Modified-Since',
    async (_shape, headers) => {
      const host = theHost();
      const first = await getCard(host.url, headers);
      const etag = first.headers.get('etag')!;
      const lastModified = first.headers.get('last-modified')!;
      const byTag = await revalidate(host.url, { ...headers, 'If-None-Match': etag });
      expect(byTag.status).toBe(304);
      expect(await byTag.text()).toBe('');
      const byDate = await revalidate(host.url, { ...headers, 'If-Modified-Since': lastModified });
      expect(byDate.status).toBe(304);
      const stale = await revalidate(host.url, { ...headers, 'If-None-Match': '"something-else"' });
      expect(stale.status).toBe(200);
    },
  );

  it('gives the two shapes different ETags, so a shared cache never serves one for the other', async () => {
    const host = theHost();
    const v1 = (await getCard(host.url, { 'A2A-Version': '1.0' })).headers.get('etag');
    const v03 = (await getCard(host.url)).headers.get('etag');
    expect(v1).not.toBe(v03);
  });
});

describe('clients of both versions use the same host', () => {
  it('the v1.0 SDK client reads the card and sends a message', async () => {
    const host = theHost();
    const client = await new ClientFactory().createFromUrl(host.url);
    expect(await createPlainTask(client)).toMatch(/\S/);
  });

  it('a real v0.3 client (@a2a-js/sdk 0.3.14) reads the header-less card and sends a message', async () => {
    const host = theHost();
    const client = await new ClientFactoryV03().createFromUrl(host.url);
    const result = await client.sendMessage({
      message: {
        kind: 'message',
        role: 'user',
        messageId: crypto.randomUUID(),
        parts: [{ kind: 'text', text: 'hello' }],
      },
    });
    expect(['task', 'message']).toContain(result.kind);
  });

  it("the v0.3 JSON-RPC client reaches the card's url", async () => {
    const host = theHost();
    const client = await A2AClientV03.fromCardUrl(host.url + CARD_PATH);
    const response = await client.sendMessage({
      message: {
        kind: 'message',
        role: 'user',
        messageId: crypto.randomUUID(),
        parts: [{ kind: 'text', text: 'hello' }],
      },
    });
    expect('result' in response ? response.result.kind : response).toMatch(/task|message/);
  });
});

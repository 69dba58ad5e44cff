import { afterEach, describe, expect, it } from 'vitest';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { DEFAULT_ACP_PRODUCER } from '../../src/cli/host-modules.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import type { HostFlags } from '../../src/server/config.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { addressOf, holdSocket, rawHttp } from '../helpers/sockets.js';

afterEach(cleanup);

/** One request of each route family a browser page could aim at (docs/host.md "Host and Origin"). */
interface Route {
  name: string;
  path: string;
  method?: string;
  body?: string;
  headers?: Record<string, string>;
  shape: 'jsonrpc' | 'rest';
}

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const ROUTES: Route[] = [
  {
    name: 'A2A JSON-RPC ListTasks',
    path: '/a2a/jsonrpc',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
    headers: { 'a2a-version': '1.0' },
    shape: 'jsonrpc',
  },
  {
    name: 'A2A HTTP+JSON ListTasks',
    path: '/a2a/rest/tasks',
    headers: { 'a2a-version': '1.0' },
    shape: 'rest',
  },
  { name: 'the agent card', path: '/.well-known/agent-card.json', shape: 'rest' },
  { name: 'ACPspec over HTTP', path: '/acp/v0.1/transactions/tx_unknown/state', shape: 'rest' },
  { name: 'the ACPspec schema', path: '/acp/schemas/0.1/envelope.schema.json', shape: 'rest' },
  {
    name: 'MCP',
    path: '/mcp',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    headers: MCP_HEADERS,
    shape: 'jsonrpc',
  },
];

/** A tokenless plain-HTTP host on loopback with both bindings: the setup a rebinding page attacks. */
async function openHost(flags: HostFlags = {}) {
  return startTestHost({
    flags: { 'no-personal-data': true, ...flags },
    modules: [
      acmpModule({ capabilities: demoCapabilities() }),
      acpModule({ producer: { ...DEFAULT_ACP_PRODUCER } }),
    ],
  });
}

function send(url: string, route: Route, headers: Record<string, string>) {
  return rawHttp(`${url}${route.path}`, {
    ...(route.method ? { method: route.method } : {}),
    ...(route.body === undefined ? {} : { body: route.body }),
    headers: { ...route.headers, ...headers },
  });
}

/** The coded 403 of the route's shape (the message is a fixed text, the reason says which check). */
function refusal(route: Route, reason: 'HOST_NOT_ALLOWED' | 'ORIGIN_NOT_ALLOWED') {
  const detail = { reason, domain: 'a2a-commerce' };
  return route.shape === 'jsonrpc'
    ? { jsonrpc: '2.0', id: null, error: { code: -31403, data: [detail] } }
    : { error: { code: 403, status: 'PERMISSION_DENIED', details: [detail] } };
}

describe('Host validation against DNS rebinding (docs/host.md "Host and Origin")', () => {
  it.each(ROUTES)('refuses a foreign Host on $name with a coded 403', async (route) => {
    const host = await openHost();
    const reply = await send(host.url, route, { host: `rebind.evil.example:${new URL(host.url).port}` });
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject(refusal(route, 'HOST_NOT_ALLOWED'));
  });

  it.each(ROUTES)('serves $name for the loopback names', async (route) => {
    const host = await openHost();
    const port = new URL(host.url).port;
    for (const name of ['127.0.0.1', 'localhost', 'LOCALHOST.']) {
      const reply = await send(host.url, route, { host: `${name}:${port}` });
      expect(reply.status, `${name} on ${route.name}`).not.toBe(403);
      expect(reply.status).toBeLessThan(500);
    }
  });

  it('serves the names given with --allowed-host', async () => {
    const host = await openHost({ 'allowed-host': ['a2a.internal', '10.1.2.3'] });
    const card = ROUTES.find((r) => r.name === 'the agent card')!;
    for (const name of ['a2a.internal', 'A2A.internal:9', '10.1.2.3:8443'])
      expect((await send(host.url, card, { host: name })).status, name).toBe(200);
    expect((await send(host.url, card, { host: 'a2a.internal.evil.example' })).status).toBe(403);
  });

  it('refuses a Host with user-info in it', async () => {
    const host = await openHost();
    const card = ROUTES.find((r) => r.name === 'the agent card')!;
    expect((await send(host.url, card, { host: `evil.example@127.0.0.1` })).status).toBe(403);
  });

  it('refuses an HTTP/1.0 request without a Host header', async () => {
    const host = await openHost();
    let reply = '';
    const held = await holdSocket(addressOf(host.url), (s) => {
      s.setEncoding('utf8');
      s.on('data', (chunk: string) => (reply += chunk));
      s.write('GET /.well-known/agent-card.json HTTP/1.0\r\n\r\n');
    });
    await held.closed;
    expect(reply).toMatch(/^HTTP\/1\.1 403 /);
    expect(reply).toContain('HOST_NOT_ALLOWED');
  });
});

describe('Origin validation (browsers; MCP Streamable HTTP §Security)', () => {
  it.each(ROUTES)('refuses a foreign Origin on $name with a coded 403', async (route) => {
    const host = await openHost();
    const reply = await send(host.url, route, { origin: 'https://evil.example' });
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject(refusal(route, 'ORIGIN_NOT_ALLOWED'));
  });

  it.each(ROUTES)('serves $name from its own host names (any port) and without an Origin', async (route) => {
    const host = await openHost();
    const variants: Record<string, string>[] = [
      { origin: host.url },
      { origin: 'http://localhost:3000' },
      {},
    ];
    for (const headers of variants) {
      const reply = await send(host.url, route, headers);
      expect(reply.status, JSON.stringify(headers)).not.toBe(403);
      expect(reply.status).toBeLessThan(500);
    }
  });

  it('refuses the opaque origin `null` and non-web schemes', async () => {
    const host = await openHost();
    const card = ROUTES.find((r) => r.name === 'the agent card')!;
    for (const origin of ['null', 'file://', 'chrome-extension://abcdef'])
      expect((await send(host.url, card, { origin })).status, origin).toBe(403);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { fetchAgentCard } from '../../src/a2a/client.js';
import { acmpCapabilityOf } from '../../src/a2a/acmp/buyer.js';
import {
  ACMP_MCP_EXTENSION_ID,
  MAX_TASK_ID_LENGTH as MCP_MAX_TASK_ID_LENGTH,
} from '../../src/mcp/acmp-extension.js';
import { cleanup, shared } from '../helpers/cleanup.js';
import {
  acmpHost,
  ALICE,
  ERAS,
  httpClient,
  invoke,
  mcpUrl,
  modernRequest,
  postMcp,
  rpcError,
  sentiment,
  TOKEN_FLAGS,
} from './helpers.js';

afterEach(cleanup);

// The tests only talk to their host (discovery, refusals, invokes with fresh task ids), so the file shares
// one plain host and one with named tokens; the clients they open are the tests' own.
const plainHost = shared(() => acmpHost());

describe('capability advertisement (seed 000 §2, Layer 1 §1)', () => {
  it.each(ERAS)('advertises over MCP (%s) the very capability object the A2A card carries', async (era) => {
    const host = plainHost();
    const card = acmpCapabilityOf(await fetchAgentCard(host.url));
    const { client } = await httpClient(host, era);
    expect(client.getProtocolEra()).toBe(era);
    expect(client.getServerCapabilities()?.extensions?.[ACMP_MCP_EXTENSION_ID]).toEqual(card);
    expect(client.getInstructions()).toContain('acmp/invoke');
  });

  it('answers a raw server/discover with the extension, the revision and resultType complete', async () => {
    const host = plainHost();
    const { body, headers } = modernRequest('server/discover');
    const res = await postMcp(host, body, headers);
    expect(res.status).toBe(200);
    const result = (res.body as { result: Record<string, unknown> }).result;
    expect(result).toMatchObject({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      ttlMs: 300_000,
      cacheScope: 'public',
    });
    expect(
      (result.capabilities as { extensions: Record<string, unknown> }).extensions[ACMP_MCP_EXTENSION_ID],
    ).toMatchObject({ role: 'provider', features: { input_streaming: false } });
  });

  it('also puts the object under the Layer 1 §1 key `acmp` of a 2025-era initialize', async () => {
    const host = plainHost();
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const res = await postMcp(host, initialize);
    const capabilities = (res.body as { result: { capabilities: Record<string, unknown> } }).result
      .capabilities;
    expect(capabilities.acmp).toEqual(
      (capabilities.extensions as Record<string, unknown>)[ACMP_MCP_EXTENSION_ID],
    );
  });

  it('answers an unknown acmp method with -32601 (MCP: 404 over Streamable HTTP)', async () => {
    const host = plainHost();
    const { body, headers } = modernRequest('acmp/negotiate', {});
    const res = await postMcp(host, body, headers);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: { code: -32601 } });
  });
});

describe('authentication (Layer 1 §5.1): the host bearer tokens guard /mcp like the A2A routes', () => {
  const tokenHost = shared(() => acmpHost({ flags: TOKEN_FLAGS }));

  it.each(ERAS)('refuses a client without a token (%s): HTTP 401 with a Bearer challenge', async (era) => {
    const host = tokenHost();
    await expect(httpClient(host, era)).rejects.toThrow();
    const res = await fetch(mcpUrl(host), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it.each(ERAS)('refuses a wrong token (%s)', async (era) => {
    const host = tokenHost();
    await expect(httpClient(host, era, 'not-a-token-0123456789')).rejects.toThrow();
  });

  it.each(ERAS)('serves the right token (%s)', async (era) => {
    const host = tokenHost();
    const { client } = await httpClient(host, era, ALICE);
    const result = await invoke(client, sentiment());
    expect(result.output).toMatchObject({ type: 'json', data: { sentiment: 'positive' } });
  });

  it('serves every caller as anonymous on a host without tokens', async () => {
    const host = plainHost();
    const { client } = await httpClient(host, 'modern');
    expect((await invoke(client, sentiment())).cost_cu).toBeGreaterThan(0);
  });
});

describe('Origin validation (MCP Streamable HTTP §Security)', () => {
  it('refuses a browser request from a foreign origin with 403', async () => {
    const host = plainHost();
    const { body, headers } = modernRequest('server/discover');
    const res = await postMcp(host, body, { ...headers, origin: 'https://evil.example' });
    expect(res.status).toBe(403);
  });

  it("accepts the host's own origin", async () => {
    const host = plainHost();
    const { body, headers } = modernRequest('server/discover');
    expect((await postMcp(host, body, { ...headers, origin: new URL(host.url).origin })).status).toBe(200);
  });
});

describe('task ids (docs/acmp-mcp-binding.md §3)', () => {
  it('refuses a task_id longer than 128 characters, the limit of the A2A binding', async () => {
    const { MAX_TASK_ID_LENGTH } = await import('../../src/a2a/acmp/provider-binding.js');
    expect(MCP_MAX_TASK_ID_LENGTH).toBe(MAX_TASK_ID_LENGTH);
    expect(MAX_TASK_ID_LENGTH).toBe(128);
    const host = plainHost();
    const { client } = await httpClient(host, 'modern');
    const error = await rpcError(invoke(client, sentiment({ task_id: 'x'.repeat(MAX_TASK_ID_LENGTH + 1) })));
    expect(error.code).toBe(-32602);
    const ok = await invoke(client, sentiment({ task_id: 'y'.repeat(MAX_TASK_ID_LENGTH) }));
    expect(ok.task_id).toHaveLength(MAX_TASK_ID_LENGTH);
  });
});

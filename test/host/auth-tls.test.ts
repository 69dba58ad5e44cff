import { afterEach, describe, expect, it } from 'vitest';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { encodeTextPart, encodeUserMessage } from '../../src/a2a/part-codec.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, postJson, startTestHost } from '../helpers/host.js';

afterEach(cleanup);

const TOKEN = 'test-token-0123456789abcdef';
const V1 = { 'A2A-Version': '1.0' };
const getTask = { jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'missing' } };

describe('bearer authentication (ACMP Layer 1 §5.1, A2A §7.4)', () => {
  // The tests only read and refuse: one host with the token serves them all.
  const tokenHost = shared(() => startTestHost({ flags: { token: [TOKEN] } }));

  it('declares the HTTP bearer scheme and requires it on the card', async () => {
    const host = tokenHost();
    const card = await fetchAgentCard(host.url);
    expect(card.securitySchemes.bearer?.scheme).toMatchObject({
      $case: 'httpAuthSecurityScheme',
      value: { scheme: 'Bearer' },
    });
    expect(card.securityRequirements[0]?.schemes).toHaveProperty('bearer');
  });

  it('keeps the card public', async () => {
    const host = tokenHost();
    const res = await fetch(`${host.url}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
  });

  it('refuses a missing token with 401 and a JSON-RPC error', async () => {
    const host = tokenHost();
    const res = await postJson(`${host.url}/a2a/jsonrpc`, getTask, V1);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { code: -31401 } });
  });

  it('refuses a wrong token with 401 and a google.rpc.Status on REST', async () => {
    const host = tokenHost();
    const res = await postJson(
      `${host.url}/a2a/rest/message:send`,
      {},
      { ...V1, authorization: 'Bearer wrong-token-value-xxxx' },
    );
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
  });

  it('accepts the right token through the SDK client', async () => {
    const host = tokenHost();
    const client = await createA2AClient(await fetchAgentCard(host.url), { token: TOKEN });
    const result = await client.sendMessage({
      tenant: '',
      message: encodeUserMessage({ messageId: crypto.randomUUID(), parts: [encodeTextPart('hi')] }),
      configuration: undefined,
      metadata: undefined,
    });
    expect('id' in result).toBe(true);
  });
});

describe('TLS', () => {
  it('serves HTTPS with a self-signed localhost certificate and lists https:// interfaces', async () => {
    const host = await startTestHost({ flags: { 'tls-self-signed': true } });
    expect(host.url.startsWith('https://')).toBe(true);
    const card = await fetchAgentCard(host.url, { caCert: host.tls!.cert });
    expect(card.supportedInterfaces.every((i) => i.url.startsWith('https://'))).toBe(true);
    const client = await createA2AClient(card, { caCert: host.tls!.cert, transport: 'HTTP+JSON' });
    const task = await client.sendMessage({
      tenant: '',
      message: encodeUserMessage({ messageId: crypto.randomUUID(), parts: [encodeTextPart('over tls')] }),
      configuration: undefined,
      metadata: undefined,
    });
    expect('id' in task).toBe(true);
  });

  it('does not trust the self-signed certificate without being told to', async () => {
    const host = await startTestHost({ flags: { 'tls-self-signed': true } });
    await expect(fetchAgentCard(host.url)).rejects.toThrow();
  });

  it('reuses the generated certificate on restart', async () => {
    const first = await startTestHost({ flags: { 'tls-self-signed': true } });
    const cert = first.tls!.cert;
    await first.close();
    const second = await startTestHost({ flags: { 'tls-self-signed': true }, dataDir: first.config.dataDir });
    expect(second.tls!.cert).toBe(cert);
  });
});

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addKey } from '../../src/acmp/identity/key-ring.js';
import { acmpHost, acmpMessage, replyError, replyRoot, sendRaw } from '../acmp/helpers.js';
import { cleanup, tempDir } from '../helpers/host.js';
import { httpClient, Loose, rpcError } from '../mcp/helpers.js';

afterEach(cleanup);

/** A host (plain HTTP: these tests read the wire, nothing resolves its DID) with one identity key. */
async function identityHost(): Promise<Awaited<ReturnType<typeof acmpHost>>> {
  const keyFile = join(tempDir(), 'keys.json');
  addKey(keyFile);
  return acmpHost({ flags: { 'identity-key': keyFile } });
}

const prove = (params: Record<string, unknown>): Record<string, unknown> =>
  acmpMessage({ acmp_method: 'acmp/proveIdentity', params });

describe('acmp/proveIdentity on the wire (Layer 7 §3)', () => {
  it('A2A: a direct agent message carrying {acmp_result: {envelope}} over {nonce, did}', async () => {
    const host = await identityHost();
    const root = replyRoot(await sendRaw(host, prove({ nonce: 'n_5f0c22d1a9be' })));
    const did = `did:web:${encodeURIComponent(new URL(host.url).host)}`;
    const envelope = (root?.acmp_result as { envelope?: Record<string, unknown> } | undefined)?.envelope;
    expect(envelope).toMatchObject({ did, verification_method: `${did}#key-1`, alg: 'EdDSA' });
    expect(envelope?.payload_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('A2A: params without a nonce are -32602; a host without a DID answers -32601', async () => {
    const host = await identityHost();
    expect(replyError(await sendRaw(host, prove({})))?.code).toBe(-32602);
    const plain = await acmpHost({ flags: { 'identity-key': join(tempDir(), 'none.json') } });
    expect(replyError(await sendRaw(plain, prove({ nonce: 'n_1' })))?.code).toBe(-32601);
  });

  it('MCP: the request is answered with the envelope; bad params -32602; no DID -32601', async () => {
    const host = await identityHost();
    const { client } = await httpClient(host, 'modern');
    const answer = await client.request({ method: 'acmp/proveIdentity', params: { nonce: 'n_2' } }, Loose);
    expect(answer).toMatchObject({ envelope: { alg: 'EdDSA' } });
    expect((await rpcError(client.request({ method: 'acmp/proveIdentity', params: {} }, Loose))).code).toBe(
      -32602,
    );
    const plain = await acmpHost({ flags: { 'identity-key': join(tempDir(), 'none.json') } });
    const other = await httpClient(plain, 'legacy');
    const refused = await rpcError(
      other.client.request({ method: 'acmp/proveIdentity', params: { nonce: 'n_3' } }, Loose),
    );
    expect(refused.code).toBe(-32601);
  });
});

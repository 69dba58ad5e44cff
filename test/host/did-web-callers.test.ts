import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createDidResolver,
  createKeySigner,
  didWebOf,
  mintCallerToken,
  type DidDocument,
} from '../../src/acmp/identity/index.js';
import { fetchTrusting } from '../../src/shared/fetch.js';
import { ensureSelfSignedCertificate } from '../../src/server/tls.js';
import { cleanup, onCleanup, postJson, startTestHost, tempDir } from '../helpers/host.js';

afterEach(cleanup);

const V1 = { 'A2A-Version': '1.0' };
const getTask = { jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'missing' } };

/** A caller's did:web, served over HTTPS with a test CA; `keys` says which keys its document lists. */
async function didWebCaller() {
  const tls = await ensureSelfSignedCertificate(tempDir());
  const keys = new Map<string, KeyObject>();
  let did = '';
  const document = (): DidDocument => ({
    id: did,
    verificationMethod: [...keys].map(([id, key]) => ({
      id: `${did}#${id}`,
      type: 'JsonWebKey2020',
      controller: did,
      publicKeyJwk: key.export({ format: 'jwk' }) as never,
    })),
    authentication: [...keys.keys()].map((id) => `${did}#${id}`),
  });
  const server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    res.setHeader('content-type', 'application/did+json');
    res.end(req.url === '/.well-known/did.json' ? JSON.stringify(document()) : '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  did = didWebOf(`https://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const addKey = (id: string) => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    keys.set(id, publicKey);
    return createKeySigner({ did, verificationMethod: `${did}#${id}` }, privateKey);
  };
  return { did, ca: tls.cert, keys, addKey };
}

describe('callers identified by did:web (resolved over HTTPS)', () => {
  it('accepts a token of a listed key, follows rotation, and refuses a removed key', async () => {
    const caller = await didWebCaller();
    const first = caller.addKey('key-1');
    const resolver = createDidResolver({ fetch: fetchTrusting(caller.ca), cacheTtlMs: 0 });
    const host = await startTestHost({ flags: { 'accept-did-callers': true }, didResolver: resolver });
    const call = async (signer: typeof first) => {
      const token = await mintCallerToken(signer, { audience: host.url });
      return postJson(`${host.url}/a2a/jsonrpc`, getTask, { ...V1, authorization: `Bearer ${token}` });
    };
    expect((await call(first)).status).toBe(200);
    const second = caller.addKey('key-2');
    expect((await call(second)).status).toBe(200);
    caller.keys.delete('key-1');
    expect((await call(first)).status).toBe(401);
    expect((await call(second)).status).toBe(200);
  });

  it('refuses a did:web that cannot be resolved', async () => {
    const caller = await didWebCaller();
    const signer = caller.addKey('key-1');
    // No CA given: the document's certificate is not trusted, so the DID does not resolve.
    const host = await startTestHost({ flags: { 'accept-did-callers': true } });
    const token = await mintCallerToken(signer, { audience: host.url });
    const res = await postJson(`${host.url}/a2a/jsonrpc`, getTask, {
      ...V1,
      authorization: `Bearer ${token}`,
    });
    expect(res.status).toBe(401);
  });

  it("never reaches a private or loopback address for a caller's did:web unless --did-private-hosts", async () => {
    let connections = 0;
    const bait = createTcpServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => bait.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise<void>((resolve) => bait.close(() => resolve())));
    const did = didWebOf(`https://127.0.0.1:${(bait.address() as AddressInfo).port}`);
    const { privateKey } = generateKeyPairSync('ed25519');
    const signer = createKeySigner({ did, verificationMethod: `${did}#key-1` }, privateKey);
    const call = async (flags: Record<string, boolean>) => {
      const host = await startTestHost({ flags: { 'accept-did-callers': true, ...flags } });
      const token = await mintCallerToken(signer, { audience: host.url });
      return postJson(`${host.url}/a2a/jsonrpc`, getTask, { ...V1, authorization: `Bearer ${token}` });
    };
    expect((await call({})).status).toBe(401);
    expect(connections).toBe(0);
    expect((await call({ 'did-private-hosts': true })).status).toBe(401);
    expect(connections).toBe(1);
  });
});

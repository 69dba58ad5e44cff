import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, tempDir } from '../../../test/helpers/cleanup.js';
import { didWebDocumentPath, didWebDocumentUrl, didWebOf } from './did-web.js';
import { signObject } from './envelope.js';
import { createWebIdentity } from './host-identity.js';
import { addKey, openKeyRing, retireKey } from './key-ring.js';
import { verifyObject, type DidResolver } from './verify.js';

afterEach(cleanup);

describe('identity key file (Layer 7 §1 "Keys")', () => {
  it('is created 0600 in a 0700 folder; keys are numbered and the newest signs', async () => {
    const path = join(tempDir(), 'identity', 'keys.json');
    expect(addKey(path).id).toBe('key-1');
    expect(addKey(path).id).toBe('key-2');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    const ring = openKeyRing(path);
    expect(ring.keys().map((k) => k.id)).toEqual(['key-1', 'key-2']);
    const signer = ring.signer((k) => ({ did: 'did:web:x', verificationMethod: `did:web:x#${k.id}` }));
    expect(signer.verificationMethod).toBe('did:web:x#key-2');
    expect(Object.keys(signer).sort()).toEqual(['alg', 'did', 'sign', 'verificationMethod']);
    expect((await signObject({ a: 1 }, signer)).sig.alg).toBe('EdDSA');
  });

  it('retire removes a key; a running ring sees changes made by another process', () => {
    const path = join(tempDir(), 'keys.json');
    addKey(path);
    const ring = openKeyRing(path);
    expect(ring.keys()).toHaveLength(1);
    addKey(path);
    expect(ring.keys().map((k) => k.id)).toEqual(['key-1', 'key-2']);
    retireKey(path, 'key-1');
    expect(ring.keys().map((k) => k.id)).toEqual(['key-2']);
    expect(addKey(path).id).toBe('key-3');
    expect(() => retireKey(path, 'key-9')).toThrow(/no identity key "key-9"/);
  });

  it('refuses a file others can read, and one that is not a key file', () => {
    const path = join(tempDir(), 'keys.json');
    addKey(path);
    chmodSync(path, 0o644);
    expect(() => openKeyRing(path).keys()).toThrow(/readable by others/);
    const broken = {
      format: 'a2a-commerce/identity-keys/v1',
      keys: [{ id: 'key-1', created_ms: 0, private_jwk: { kty: 'OKP', crv: 'Ed25519', d: 'AA', x: 'AA' } }],
    };
    writeFileSync(path, JSON.stringify(broken), { mode: 0o600 });
    chmodSync(path, 0o600);
    expect(() => openKeyRing(path).keys()).toThrow(/key-1 is not a usable private key/);
    writeFileSync(path, '{"format":"other"}', { mode: 0o600 });
    chmodSync(path, 0o600);
    expect(() => openKeyRing(path).keys()).toThrow(/not a key file/);
  });

  it('an absent file is an empty ring that cannot sign', () => {
    const ring = openKeyRing(join(tempDir(), 'none.json'));
    expect(ring.keys()).toEqual([]);
    expect(() => ring.signer(() => ({ did: 'd', verificationMethod: 'd#k' }))).toThrow(/keys new/);
  });
});

describe('did:web names (did:web method spec)', () => {
  it('encodes the port as %3A and path segments as : segments', () => {
    expect(didWebOf('https://compute.example.com')).toBe('did:web:compute.example.com');
    expect(didWebOf('https://127.0.0.1:8443')).toBe('did:web:127.0.0.1%3A8443');
    expect(didWebOf('https://Example.COM/agents/a%20b/')).toBe('did:web:example.com:agents:a%20b');
  });

  it('maps back to the document URL', () => {
    expect(didWebDocumentUrl('127.0.0.1%3A8443')?.href).toBe('https://127.0.0.1:8443/.well-known/did.json');
    expect(didWebDocumentUrl('example.com:agents:a%20b')?.href).toBe(
      'https://example.com/agents/a%20b/did.json',
    );
    expect(didWebDocumentPath('https://example.com')).toBe('/.well-known/did.json');
    for (const bad of ['', 'user@example.com', 'example.com%2Fpath', 'example.com::x'])
      expect(didWebDocumentUrl(bad)).toBeUndefined();
  });
});

describe('a host did:web document (Layer 7 §2.2)', () => {
  it('lists every current key as JsonWebKey2020 under assertionMethod and authentication, and the alias', async () => {
    const path = join(tempDir(), 'keys.json');
    addKey(path);
    addKey(path);
    const identity = createWebIdentity({
      keys: openKeyRing(path),
      baseUrl: () => 'https://127.0.0.1:9443',
      alsoKnownAs: ['agent:openclaw-3:us-east'],
    });
    const did = 'did:web:127.0.0.1%3A9443';
    const doc = identity.document();
    expect(identity.did).toBe(did);
    expect(doc).toMatchObject({
      id: did,
      alsoKnownAs: ['agent:openclaw-3:us-east'],
      assertionMethod: [`${did}#key-1`, `${did}#key-2`],
      authentication: [`${did}#key-1`, `${did}#key-2`],
    });
    expect(doc.verificationMethod?.map((m) => [m.type, m.controller, m.publicKeyJwk?.crv])).toEqual([
      ['JsonWebKey2020', did, 'Ed25519'],
      ['JsonWebKey2020', did, 'Ed25519'],
    ]);
    expect(JSON.stringify(doc)).not.toMatch(/"d":/);
    const resolver: DidResolver = { resolve: () => Promise.resolve(identity.document()) };
    const signed = await signObject({ x: 1 }, identity.signer());
    expect((await verifyObject(signed, { resolver, expectedDid: did })).verificationMethod).toBe(
      `${did}#key-2`,
    );
    expect(readFileSync(path, 'utf8')).toContain('"d"');
  });
});

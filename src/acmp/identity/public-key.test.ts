import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyFitsAlg, multikeyOf, publicKeyOf } from './public-key.js';

describe('verification method keys (DID Core §5.2)', () => {
  for (const [name, pair, alg] of [
    ['Ed25519', generateKeyPairSync('ed25519'), 'EdDSA'],
    ['P-256', generateKeyPairSync('ec', { namedCurve: 'P-256' }), 'ES256'],
  ] as const) {
    it(`reads a ${name} key as Multikey (publicKeyMultibase) and as JsonWebKey2020`, () => {
      const spki = pair.publicKey.export({ format: 'der', type: 'spki' });
      const multikey = {
        id: 'did:x:1#k',
        type: 'Multikey',
        controller: 'did:x:1',
        publicKeyMultibase: multikeyOf(pair.publicKey),
      };
      const jwk = {
        id: 'did:x:1#k',
        type: 'JsonWebKey2020',
        controller: 'did:x:1',
        publicKeyJwk: pair.publicKey.export({ format: 'jwk' }) as { kty: string },
      };
      for (const method of [multikey, jwk]) {
        const key = publicKeyOf(method);
        expect(key?.export({ format: 'der', type: 'spki' }).equals(spki)).toBe(true);
        expect(key && keyFitsAlg(key, alg)).toBe(true);
      }
    });
  }

  it('reads no key from an unknown multicodec or a method without key material', () => {
    expect(
      publicKeyOf({ id: 'a', type: 'Multikey', controller: 'b', publicKeyMultibase: 'z1111' }),
    ).toBeUndefined();
    expect(publicKeyOf({ id: 'a', type: 'Multikey', controller: 'b' })).toBeUndefined();
  });
});

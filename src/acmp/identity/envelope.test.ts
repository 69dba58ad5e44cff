import {
  createHash,
  generateKeyPairSync,
  sign as nodeSign,
  verify as nodeVerify,
  type KeyObject,
} from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { describe, expect, it } from 'vitest';
import { didKeyOf } from './did-key.js';
import type { DidDocument } from './did-document.js';
import { signObject } from './envelope.js';
import { createDidResolver } from './resolver.js';
import { createKeySigner } from './signer.js';
import { verifyObject, type DidResolver } from './verify.js';

/** A resolver that knows the given documents and nothing else (-36002 like a real one). */
function staticResolver(...docs: DidDocument[]): DidResolver {
  return {
    resolve: (did) => {
      const doc = docs.find((d) => d.id === did);
      if (doc) return Promise.resolve(doc);
      return Promise.reject(Object.assign(new Error('unknown'), { code: -36002 }));
    },
  };
}

/** A did:web document listing one JsonWebKey2020 key under assertionMethod and authentication. */
function webDocument(did: string, publicKey: KeyObject, keyId = 'key-1'): DidDocument {
  const id = `${did}#${keyId}`;
  return {
    id: did,
    verificationMethod: [
      {
        id,
        type: 'JsonWebKey2020',
        controller: did,
        publicKeyJwk: publicKey.export({ format: 'jwk' }) as never,
      },
    ],
    assertionMethod: [id],
    authentication: [id],
  };
}

const SPEC_DID = 'did:web:compute.example.com';
const challenge = { nonce: 'n_5f0c22d1a9be', did: SPEC_DID };

describe('signature envelope (Layer 7 §4)', () => {
  const ed = generateKeyPairSync('ed25519');
  const signer = createKeySigner({ did: SPEC_DID, verificationMethod: `${SPEC_DID}#key-1` }, ed.privateKey);

  it('adds sig with the six fields; payload_hash is sha256 over the JCS text of the object', async () => {
    const signed = await signObject(challenge, signer, { clock: { now: () => 1783017900000 } });
    const jcs = '{"did":"did:web:compute.example.com","nonce":"n_5f0c22d1a9be"}';
    const { signature, ...rest } = signed.sig;
    expect(signature).toMatch(/^[A-Za-z0-9_-]{86}$/);
    expect(rest).toEqual({
      did: SPEC_DID,
      verification_method: `${SPEC_DID}#key-1`,
      alg: 'EdDSA',
      created_ms: 1783017900000,
      payload_hash: `sha256:${createHash('sha256').update(jcs).digest('hex')}`,
    });
    expect({ nonce: signed.nonce, did: signed.did }).toEqual(challenge);
  });

  it('signs the UTF-8 text of payload_hash: Node crypto and @noble/curves verify it', async () => {
    const { sig } = await signObject(challenge, signer);
    const message = Buffer.from(sig.payload_hash, 'utf8');
    const signature = Buffer.from(sig.signature, 'base64url');
    expect(nodeVerify(null, message, ed.publicKey, signature)).toBe(true);
    const raw = Buffer.from(ed.publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
    expect(ed25519.verify(signature, message, raw)).toBe(true);
  });

  it('ES256 envelopes are r‖s over SHA-256 of the payload_hash text (@noble/curves p256 verifies)', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const es = createKeySigner({ did: SPEC_DID, verificationMethod: `${SPEC_DID}#key-2` }, ec.privateKey);
    const signed = await signObject(challenge, es);
    expect(signed.sig.alg).toBe('ES256');
    const uncompressed = ec.publicKey.export({ format: 'der', type: 'spki' }).subarray(-65);
    const message = Buffer.from(signed.sig.payload_hash, 'utf8');
    // Node's ECDSA does not normalise s, so the check accepts high-s signatures as JOSE does.
    const signature = Buffer.from(signed.sig.signature, 'base64url');
    expect(p256.verify(signature, message, uncompressed, { lowS: false })).toBe(true);
    const verified = await verifyObject(signed, {
      resolver: staticResolver(webDocument(SPEC_DID, ec.publicKey, 'key-2')),
      expectedDid: SPEC_DID,
    });
    expect(verified.alg).toBe('ES256');
  });

  it('verifies an envelope built by hand from the spec text, EdDSA and ES256', async () => {
    const jcs = '{"did":"did:web:compute.example.com","nonce":"n_5f0c22d1a9be"}';
    const payloadHash = `sha256:${createHash('sha256').update(jcs, 'utf8').digest('hex')}`;
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const handBuilt = [
      { alg: 'EdDSA', signature: nodeSign(null, Buffer.from(payloadHash), ed.privateKey), key: 'key-1' },
      {
        alg: 'ES256',
        signature: nodeSign('sha256', Buffer.from(payloadHash), {
          key: ec.privateKey,
          dsaEncoding: 'ieee-p1363',
        }),
        key: 'key-2',
      },
    ];
    const doc = webDocument(SPEC_DID, ed.publicKey);
    const ecDoc = webDocument(SPEC_DID, ec.publicKey, 'key-2');
    doc.verificationMethod?.push(...(ecDoc.verificationMethod ?? []));
    doc.assertionMethod?.push(`${SPEC_DID}#key-2`);
    for (const { alg, signature, key } of handBuilt) {
      const object = {
        nonce: 'n_5f0c22d1a9be',
        did: SPEC_DID,
        sig: {
          did: SPEC_DID,
          verification_method: `${SPEC_DID}#${key}`,
          alg,
          created_ms: 1783017900000,
          payload_hash: payloadHash,
          signature: signature.toString('base64url'),
        },
      };
      const verified = await verifyObject(object, { resolver: staticResolver(doc), expectedDid: SPEC_DID });
      expect([verified.alg, verified.verificationMethod]).toEqual([alg, `${SPEC_DID}#${key}`]);
    }
  });

  it('verifies a did:key signer through key-did-resolver', async () => {
    const buyer = generateKeyPairSync('ed25519');
    const id = didKeyOf(buyer.publicKey);
    expect(id.did).toMatch(/^did:key:z6Mk/);
    const signed = await signObject({ offer_id: 'o1', price_cu: 3 }, createKeySigner(id, buyer.privateKey));
    const verified = await verifyObject(signed, { resolver: createDidResolver(), expectedDid: id.did });
    expect(verified.did).toBe(id.did);
  });

  it('verifies a P-256 did:key signer (ES256) through key-did-resolver', async () => {
    const buyer = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const id = didKeyOf(buyer.publicKey);
    expect(id.did).toMatch(/^did:key:zDn/);
    const signed = await signObject({ n: 1 }, createKeySigner(id, buyer.privateKey));
    await expect(
      verifyObject(signed, { resolver: createDidResolver(), expectedDid: id.did }),
    ).resolves.toMatchObject({
      alg: 'ES256',
    });
  });
});

describe('envelope verification failures (Layer 7 §4, §7)', () => {
  const ed = generateKeyPairSync('ed25519');
  const signer = createKeySigner({ did: SPEC_DID, verificationMethod: `${SPEC_DID}#key-1` }, ed.privateKey);
  const resolver = staticResolver(webDocument(SPEC_DID, ed.publicKey));
  const offer = { offer_id: 'o1', capability: 'echo', price_cu: 2 };

  async function failure(
    object: unknown,
    expectedDid: string | undefined = SPEC_DID,
    r = resolver,
  ): Promise<unknown> {
    const error = await verifyObject(object, { resolver: r, expectedDid }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeDefined();
    const { code, data } = error as { code: number; data: unknown };
    return { code, data };
  }

  it('a tampered field: -36003 payload_hash', async () => {
    const signed = await signObject(offer, signer);
    expect(await failure({ ...signed, price_cu: 1 })).toEqual({
      code: -36003,
      data: { check: 'payload_hash' },
    });
  });

  it('another DID than the expected one (the substitution attack): -36003 did', async () => {
    const signed = await signObject(offer, signer);
    expect(await failure(signed, 'did:web:other.example')).toEqual({ code: -36003, data: { check: 'did' } });
  });

  it('no sig, or a malformed one: -36003 envelope', async () => {
    expect(await failure(offer)).toEqual({ code: -36003, data: { check: 'envelope' } });
    const signed = await signObject(offer, signer);
    expect(await failure({ ...signed, sig: { ...signed.sig, payload_hash: 'md5:00' } })).toEqual({
      code: -36003,
      data: { check: 'envelope' },
    });
  });

  it('a signature that does not verify: -36003 signature', async () => {
    const signed = await signObject(offer, signer);
    const other = await signObject({ ...offer, price_cu: 9 }, signer);
    expect(await failure({ ...signed, sig: { ...signed.sig, signature: other.sig.signature } })).toEqual({
      code: -36003,
      data: { check: 'signature' },
    });
  });

  it('an algorithm outside EdDSA/ES256, or not the key type: -36003 alg', async () => {
    const signed = await signObject(offer, signer);
    expect(await failure({ ...signed, sig: { ...signed.sig, alg: 'RS256' } })).toEqual({
      code: -36003,
      data: { check: 'alg' },
    });
    expect(await failure({ ...signed, sig: { ...signed.sig, alg: 'ES256' } })).toEqual({
      code: -36003,
      data: { check: 'alg' },
    });
  });

  it('a method the document does not list for signing, or of another DID: -36003 verification_method', async () => {
    const signed = await signObject(offer, signer);
    const unknown = { ...signed, sig: { ...signed.sig, verification_method: `${SPEC_DID}#key-9` } };
    expect(await failure(unknown)).toEqual({ code: -36003, data: { check: 'verification_method' } });
    const foreign = { ...signed, sig: { ...signed.sig, verification_method: 'did:web:evil.example#key-1' } };
    expect(await failure(foreign)).toEqual({ code: -36003, data: { check: 'verification_method' } });
    const keyAgreementOnly = webDocument(SPEC_DID, ed.publicKey);
    delete keyAgreementOnly.assertionMethod;
    delete keyAgreementOnly.authentication;
    expect(await failure(signed, SPEC_DID, staticResolver(keyAgreementOnly))).toEqual({
      code: -36003,
      data: { check: 'verification_method' },
    });
  });

  it('a DID that cannot be resolved: -36002', async () => {
    const stranger = createKeySigner(
      { did: 'did:example:123', verificationMethod: 'did:example:123#k' },
      ed.privateKey,
    );
    const signed = await signObject(offer, stranger);
    expect(await failure(signed, 'did:example:123', createDidResolver())).toEqual({
      code: -36002,
      data: { reason: 'unsupportedDidMethod' },
    });
  });
});

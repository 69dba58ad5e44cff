import { createPublicKey, ECDH, type KeyObject } from 'node:crypto';
import { varint } from 'multiformats';
import { base58btc } from 'multiformats/bases/base58';
import type { VerificationMethod } from './did-document.js';
import type { SignatureAlg } from './signer.js';

/** Multicodec codes of the public keys we read (the multicodec table: `ed25519-pub`, `p256-pub`). */
const MULTICODEC = { ed25519Pub: 0xed, p256Pub: 0x1200 } as const;

/**
 * The public key of a verification method, or `undefined` when it carries none we can read.
 * Read forms: `publicKeyJwk` (JsonWebKey2020, JsonWebKey), `publicKeyMultibase` of an Ed25519 or P-256
 * multicodec key (Multikey, Ed25519VerificationKey2020), and `publicKeyBase58` of a raw Ed25519 key
 * (Ed25519VerificationKey2018, what `key-did-resolver` puts in `did:key` documents).
 */
export function publicKeyOf(method: VerificationMethod): KeyObject | undefined {
  try {
    if (method.publicKeyJwk) {
      const { kty, crv, x, y } = method.publicKeyJwk;
      // Only the public members: a document that (wrongly) publishes `d` still yields a public key.
      return createPublicKey({ key: { kty, crv, x, y }, format: 'jwk' });
    }
    if (method.publicKeyMultibase !== undefined) return multikeyPublicKey(method.publicKeyMultibase);
    if (method.publicKeyBase58 !== undefined && method.type.startsWith('Ed25519'))
      return ed25519PublicKey(base58btc.baseDecode(method.publicKeyBase58));
  } catch {
    return undefined;
  }
  return undefined;
}

/** Whether `key` is one `alg` verifies with (Layer 7 §4: `EdDSA` is Ed25519, `ES256` is P-256). */
export function keyFitsAlg(key: KeyObject, alg: SignatureAlg): boolean {
  if (alg === 'EdDSA') return key.asymmetricKeyType === 'ed25519';
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
}

/** A multibase (base58btc, `z…`) multicodec public key: Ed25519 or compressed/uncompressed P-256. */
function multikeyPublicKey(multibase: string): KeyObject | undefined {
  const bytes = base58btc.decode(multibase);
  const [code, length] = varint.decode(bytes);
  const raw = bytes.subarray(length);
  if (code === MULTICODEC.ed25519Pub) return ed25519PublicKey(raw);
  if (code === MULTICODEC.p256Pub) return p256PublicKey(raw);
  return undefined;
}

/** The multibase (base58btc) multicodec form of an Ed25519 or P-256 public key (compressed point). */
export function multikeyOf(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' });
  if (publicKey.asymmetricKeyType === 'ed25519')
    return base58btc.encode(withCodec(MULTICODEC.ed25519Pub, Buffer.from(jwk.x ?? '', 'base64url')));
  const uncompressed = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x ?? '', 'base64url'),
    Buffer.from(jwk.y ?? '', 'base64url'),
  ]);
  const compressed = ECDH.convertKey(uncompressed, 'prime256v1', undefined, undefined, 'compressed');
  return base58btc.encode(withCodec(MULTICODEC.p256Pub, compressed as Buffer));
}

function withCodec(code: number, raw: Uint8Array): Uint8Array {
  const prefix = new Uint8Array(varint.encodingLength(code));
  varint.encodeTo(code, prefix);
  return Buffer.concat([prefix, raw]);
}

function ed25519PublicKey(raw: Uint8Array): KeyObject | undefined {
  if (raw.length !== 32) return undefined;
  return createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') },
    format: 'jwk',
  });
}

function p256PublicKey(raw: Uint8Array): KeyObject | undefined {
  const point = ECDH.convertKey(
    Buffer.from(raw),
    'prime256v1',
    undefined,
    undefined,
    'uncompressed',
  ) as Buffer;
  if (point.length !== 65) return undefined;
  return createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
}

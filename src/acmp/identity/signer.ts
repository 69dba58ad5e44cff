import { sign as cryptoSign, type KeyObject } from 'node:crypto';
import { LocalError } from '../../shared/errors.js';

/** The signature algorithms of Layer 7 §4: verifiers accept both, signers SHOULD use `EdDSA`. */
export type SignatureAlg = 'EdDSA' | 'ES256';

const SIGNATURE_ALGS: readonly SignatureAlg[] = ['EdDSA', 'ES256'];

/** Whether a value (a JWS header's or an envelope's `alg`) names a Layer 7 §4 algorithm. */
export function isSignatureAlg(value: unknown): value is SignatureAlg {
  return SIGNATURE_ALGS.some((alg) => alg === value);
}

/**
 * Whoever holds a signing key (the wallet of Layer 7 §1): it signs bytes it is given and says which DID
 * and verification method the signature belongs to. The key material never leaves it — callers get
 * signatures, never keys (Layer 7 §1 "Keys", §2.3).
 */
export interface Signer {
  /** The signer's DID (Layer 7 §2). */
  readonly did: string;
  /** The DID URL of the verification method whose key signs, e.g. `did:web:example.com#key-1`. */
  readonly verificationMethod: string;
  readonly alg: SignatureAlg;
  /**
   * The signature of `data`: Ed25519 (RFC 8032) for `EdDSA`; for `ES256`, ECDSA P-256 over SHA-256 of
   * `data`, as the 64 bytes `r ‖ s` (RFC 7518 §3.4, the JOSE form, not DER).
   */
  sign(data: Uint8Array, options?: { signal?: AbortSignal }): Promise<Uint8Array>;
}

/**
 * The algorithm a key signs with: `EdDSA` for Ed25519, `ES256` for ECDSA P-256.
 * @throws LocalError `CONFIG_INVALID` for any other key.
 */
function algOfKey(key: KeyObject): SignatureAlg {
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  throw new LocalError('CONFIG_INVALID', 'identity keys must be Ed25519 or ECDSA P-256');
}

/** Signs `data` with a private key in the form {@link Signer.sign} documents. */
function signBytes(privateKey: KeyObject, data: Uint8Array): Uint8Array {
  return algOfKey(privateKey) === 'EdDSA'
    ? cryptoSign(null, data, privateKey)
    : cryptoSign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
}

/**
 * A {@link Signer} over a private key held in this process: the key stays in the closure, the object
 * exposes only the DID, the verification method and `sign`.
 * @throws LocalError `CONFIG_INVALID` when the key is not private or of no supported type.
 */
export function createKeySigner(
  identity: { did: string; verificationMethod: string },
  privateKey: KeyObject,
): Signer {
  if (privateKey.type !== 'private') throw new LocalError('CONFIG_INVALID', 'a signer needs a private key');
  const alg = algOfKey(privateKey);
  return Object.freeze({
    did: identity.did,
    verificationMethod: identity.verificationMethod,
    alg,
    sign: (data: Uint8Array, options?: { signal?: AbortSignal }) => {
      options?.signal?.throwIfAborted();
      return Promise.resolve(signBytes(privateKey, data));
    },
  });
}

import { verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { isJsonObject } from '../../shared/json.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { signingMethod, type DidDocument } from './did-document.js';
import { payloadHashOf, SignatureEnvelopeSchema, signingInput, type SignatureEnvelope } from './envelope.js';
import { keyFitsAlg, publicKeyOf } from './public-key.js';
import { isSignatureAlg, type SignatureAlg } from './signer.js';

/** Resolves DIDs to their documents (Layer 7 §2.1: `did:web` and `did:key` at least). */
export interface DidResolver {
  /**
   * The DID document of `did`. `refresh` asks for a fresh copy when a cached one lacks what the caller
   * looks for (a key added since); a resolver MAY still answer from a very recent copy.
   * @throws AcmpError -36002 `did_unresolvable` (method unsupported, fetch failed or timed out, not a
   *   document of that DID).
   */
  resolve(did: string, options?: { signal?: AbortSignal; refresh?: boolean }): Promise<DidDocument>;
}

/** What {@link verifyObject} checks a signature against. */
export interface VerifyOptions {
  readonly resolver: DidResolver;
  /**
   * The DID the signer must be (Layer 7 §3: the one advertised in the capability object, or the bound
   * payee): without it any party with any valid DID could have signed (the substitution attack).
   */
  readonly expectedDid: string | undefined;
  readonly signal?: AbortSignal;
}

/** A signature that verified: who signed, with which key, when they say they did. */
export interface VerifiedSignature {
  readonly did: string;
  readonly verificationMethod: string;
  readonly alg: SignatureAlg;
  readonly createdMs: number;
  readonly envelope: SignatureEnvelope;
}

/** Which check of {@link verifyObject} failed (the `check` of the error's `data`). */
export type SignatureCheck =
  'envelope' | 'did' | 'alg' | 'verification_method' | 'payload_hash' | 'key' | 'signature';

function invalid(check: SignatureCheck): AcmpError {
  return new AcmpError(ACMP_CODE.signatureInvalid, { check });
}

/**
 * Verifies the Layer 7 §4 envelope in `object.sig`: the signer is the expected DID, the algorithm is
 * `EdDSA` or `ES256`, the verification method is a DID URL of that DID, the payload hash is the JCS hash
 * of the object without `sig`, the DID resolves, its document lists the method under `assertionMethod`
 * or `authentication` with a key of that algorithm, and the signature verifies over `payload_hash`.
 * Cheap checks run before the DID is resolved, so a tampered object costs no fetch.
 * @throws AcmpError -36003 `signature_invalid` with `data.check` naming the failed check;
 *   -36002 `did_unresolvable` from the resolver.
 */
export async function verifyObject(object: unknown, options: VerifyOptions): Promise<VerifiedSignature> {
  if (!isJsonObject(object)) throw invalid('envelope');
  const parsed = SignatureEnvelopeSchema.safeParse(object.sig);
  if (!parsed.success) throw invalid('envelope');
  const envelope = parsed.data;
  if (options.expectedDid !== undefined && envelope.did !== options.expectedDid) throw invalid('did');
  const alg = envelope.alg;
  if (!isSignatureAlg(alg)) throw invalid('alg');
  if (!envelope.verification_method.startsWith(`${envelope.did}#`)) throw invalid('verification_method');
  if (payloadHashOf(object) !== envelope.payload_hash) throw invalid('payload_hash');
  const key = await signingKey(envelope, options);
  if (!keyFitsAlg(key, alg)) throw invalid('alg');
  if (!verifyBytes({ alg, key }, signingInput(envelope.payload_hash), envelope.signature))
    throw invalid('signature');
  return {
    did: envelope.did,
    verificationMethod: envelope.verification_method,
    alg,
    createdMs: envelope.created_ms,
    envelope,
  };
}

/** The public key of the envelope's method; after a miss, once more from a fresh document (rotation). */
async function signingKey(envelope: SignatureEnvelope, options: VerifyOptions): Promise<KeyObject> {
  const id = envelope.verification_method;
  const lookup = (doc: DidDocument): ReturnType<typeof signingMethod> =>
    doc.id === envelope.did ? signingMethod(doc, id) : undefined;
  let method = lookup(await options.resolver.resolve(envelope.did, { signal: options.signal }));
  method ??= lookup(await options.resolver.resolve(envelope.did, { signal: options.signal, refresh: true }));
  if (!method) throw invalid('verification_method');
  const key = publicKeyOf(method);
  if (!key) throw invalid('key');
  return key;
}

/** Verifies a base64url signature in the form `Signer.sign` documents. */
function verifyBytes(
  { alg, key }: { alg: SignatureAlg; key: KeyObject },
  data: Uint8Array,
  signature: string,
): boolean {
  const bytes = Buffer.from(signature, 'base64url');
  try {
    return alg === 'EdDSA'
      ? cryptoVerify(null, data, key, bytes)
      : cryptoVerify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, bytes);
  } catch {
    return false;
  }
}

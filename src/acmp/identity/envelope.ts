import { z } from 'zod';
import { systemClock, type Clock } from '../../shared/clock.js';
import { sha256Jcs } from '../../shared/jcs.js';
import type { Signer } from './signer.js';

/**
 * The Layer 7 §4 signature envelope: one structure for signing any ACMP JSON object, carried in a `sig`
 * field added to the object it covers. The signed object is the object without `sig`; its hash is
 * SHA-256 over its RFC 8785 (JCS) form; the signature input is the UTF-8 (ASCII) text of `payload_hash`
 * itself, `sha256:<64 lowercase hex>` (docs/acmp-identity.md "What is signed").
 */
export const SignatureEnvelopeSchema = z.looseObject({
  did: z.string().startsWith('did:'),
  verification_method: z.string().min(1),
  alg: z.string().min(1),
  created_ms: z.int().nonnegative(),
  payload_hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  signature: z.string().regex(/^[A-Za-z0-9_-]+$/),
});
export type SignatureEnvelope = z.infer<typeof SignatureEnvelopeSchema>;

/** The member of a signed object that carries its envelope (Layer 7 §4). */
export const SIG_FIELD = 'sig';

/** An object with its Layer 7 §4 envelope. */
export type Signed<T extends object> = Omit<T, typeof SIG_FIELD> & { sig: SignatureEnvelope };

/** `object` without its `sig` member: what an envelope covers. */
function unsigned(object: Record<string, unknown>): Record<string, unknown> {
  if (!(SIG_FIELD in object)) return object;
  const { [SIG_FIELD]: _sig, ...rest } = object;
  return rest;
}

/**
 * `payload_hash` of an object (Layer 7 §4): `sha256:` + hex over the JCS form of the object without
 * its `sig` member.
 * @throws LocalError `INVALID_STATE` for values JSON cannot carry.
 */
export function payloadHashOf(object: object): string {
  return sha256Jcs(unsigned(object as Record<string, unknown>));
}

/** The bytes a signature covers: the UTF-8 text of `payload_hash` (docs/acmp-identity.md "What is signed"). */
export function signingInput(payloadHash: string): Uint8Array {
  return Buffer.from(payloadHash, 'utf8');
}

/**
 * Signs `object` (Layer 7 §4): returns a copy with `sig` set to the envelope over the object without
 * `sig` (an envelope already there is replaced, never covered). The object is hashed as given — callers
 * sign what they send, never a re-serialised copy of something received.
 * @throws LocalError `INVALID_STATE` for values JSON cannot carry; whatever the signer throws.
 */
export async function signObject<T extends object>(
  object: T,
  signer: Signer,
  options: { clock?: Clock; signal?: AbortSignal } = {},
): Promise<Signed<T>> {
  const body = unsigned(object as Record<string, unknown>);
  const payloadHash = payloadHashOf(body);
  const createdMs = (options.clock ?? systemClock).now();
  const signature = await signer.sign(signingInput(payloadHash), { signal: options.signal });
  const sig: SignatureEnvelope = {
    did: signer.did,
    verification_method: signer.verificationMethod,
    alg: signer.alg,
    created_ms: createdMs,
    payload_hash: payloadHash,
    signature: Buffer.from(signature).toString('base64url'),
  };
  return { ...body, sig } as Signed<T>;
}

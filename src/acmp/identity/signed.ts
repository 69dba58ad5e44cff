import type { Clock } from '../../shared/clock.js';
import { signObject, type SignatureEnvelope } from './envelope.js';
import type { Signer } from './signer.js';

/**
 * `object` as sent with its Layer 7 §4 envelope in `sig` (an envelope already there is replaced, never
 * covered), typed as the object it was: what every ACMP party signs before it sends (docs/acmp-identity.md
 * "What is signed and checked").
 * @throws whatever the signer throws; LocalError `INVALID_STATE` for values JSON cannot carry.
 */
export async function withSignature<T extends object>(
  object: T,
  signer: Signer,
  options: { clock?: Clock; signal?: AbortSignal } = {},
): Promise<T & { sig: SignatureEnvelope }> {
  const { sig } = await signObject(object, signer, options);
  return { ...object, sig };
}

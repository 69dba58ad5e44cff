import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../../shared/jcs.js';
import type { TaskScope } from '../provider/task-store.js';

/**
 * The terms an offer binds the provider to, as the offer id carries them. `buyer` is a digest of the
 * requester's scope, so only the agent that asked can accept (docs/acmp-negotiation.md "Offer ids");
 * `session` binds an offer of session mode to its session, so it is accepted there and nowhere else.
 */
export const OfferTermsSchema = z.object({
  capability: z.string().min(1),
  price_cu: z.number().nonnegative(),
  valid_until_ms: z.int(),
  buyer: z.string().min(1),
  latency_sla_ms: z.int().positive().optional(),
  proof_method: z.string().min(1).optional(),
  challenge_window_ms: z.int().nonnegative().optional(),
  input_tokens_max: z.int().nonnegative().optional(),
  /** The negotiation session the offer belongs to (session mode, docs/acmp-negotiation.md); only acceptable there. */
  session: z.string().min(1).optional(),
});
export type OfferTerms = z.infer<typeof OfferTermsSchema>;

const PREFIX = 'offer_';

/**
 * A self-verifying offer id (L6 §3 "quoting MUST be stateless"; docs/acmp-negotiation.md "Quotes are stateless"): `offer_` + base64url of the
 * JCS of the terms + `.` + base64url of an HMAC-SHA256 over those bytes under the provider's offer key.
 * Any host holding the key can verify an accept without having stored the quote.
 */
export function encodeOfferId(terms: OfferTerms, key: Buffer): string {
  const body = Buffer.from(canonicalJson(terms), 'utf8');
  return `${PREFIX}${body.toString('base64url')}.${mac(body, key).toString('base64url')}`;
}

/**
 * The terms of an offer id this provider issued; `undefined` for anything else (forged, altered, foreign,
 * or not spelled exactly as issued). Node's base64url decoder skips `=`, whitespace and foreign characters,
 * so an id is accepted only when re-encoding its bytes gives the input back: one offer, one spelling, and
 * an agreement keyed by the id is keyed by the offer (L6 §2.2 "offers are single-use").
 */
export function decodeOfferId(offerId: string, key: Buffer): OfferTerms | undefined {
  if (!offerId.startsWith(PREFIX)) return undefined;
  const [body, tag, extra] = offerId.slice(PREFIX.length).split('.');
  if (body === undefined || tag === undefined || extra !== undefined) return undefined;
  const bytes = Buffer.from(body, 'base64url');
  const given = Buffer.from(tag, 'base64url');
  if (bytes.toString('base64url') !== body || given.toString('base64url') !== tag) return undefined;
  const expected = mac(bytes, key);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const parsed = OfferTermsSchema.safeParse(JSON.parse(bytes.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The digest of a scope that an offer carries (who may accept it), never the identity itself. */
export function buyerDigest(scope: TaskScope): string {
  return hash('sha256', `${scope.tenant}\n${scope.agent}`, 'base64url').slice(0, 22);
}

/**
 * The store key of an offer id. {@link decodeOfferId} accepts an id only in the one spelling it was issued
 * in, so the key of a verified id is the key of its offer: every spelling of one offer has one agreement.
 */
export function offerKeyOf(offerId: string): string {
  return hash('sha256', offerId, 'hex');
}

function mac(bytes: Buffer, key: Buffer): Buffer {
  return createHmac('sha256', key).update(bytes).digest();
}

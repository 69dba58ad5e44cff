import type { JsonValue } from '../../shared/json.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { SignatureEnvelopeSchema, type SignatureEnvelope } from '../identity/envelope.js';
import { verifyObject, type DidResolver } from '../identity/verify.js';
import { ESCROW_METHOD, type EscrowMethod } from './constants.js';
import type { EscrowRecord } from './record.js';

/*
 * Escrow parties that are DIDs (Layer 7 §2, §4.1; docs/acmp-escrow.md "DID parties"). A payee id that is a
 * DID is proven by signatures, not by a token: a claim MUST carry that DID's envelope, and a signed status
 * read lets the payee follow its escrow. A buyer that names its DID at lock (`buyer_did`, ours) or
 * authenticates as one MUST sign its disputes with it. Where no party is a DID, nothing is checked
 * (a Layer-4-only deployment stays conforming, L7 §4.1 P5).
 */

/** DID syntax (W3C DID Core §3.1): `did:<method>:<method-specific id>`. */
const DID_PATTERN = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]*[A-Za-z0-9._-]$/;

/** The longest DID an escrow records. */
const MAX_DID_LENGTH = 512;

/**
 * How far from the agent's clock a signed status read or claim may be: a captured read cannot be replayed
 * later to read the escrow, and a claim is the DID payee's proof of key control before its payout (L7 §3;
 * docs/acmp-escrow.md "DID parties"), so it must be fresh, not one held back and sent later.
 */
const SIGNED_REQUEST_MAX_AGE_MS = 5 * 60_000;

/** The requests whose envelope must be fresh. */
const FRESH: readonly EscrowMethod[] = [ESCROW_METHOD.status, ESCROW_METHOD.claim];

/** Whether `value` is a DID. */
export function isDid(value: string | null | undefined): value is string {
  return typeof value === 'string' && value.length <= MAX_DID_LENGTH && DID_PATTERN.test(value);
}

/** The DID a request of `party` to this escrow must be signed by, if any (the method's DID-bound side). */
function requiredSigner(record: EscrowRecord, { method, params, party }: SignedRequest): string | undefined {
  switch (method) {
    case ESCROW_METHOD.claim:
      return isDid(record.payee) ? record.payee : undefined;
    case ESCROW_METHOD.dispute:
      return record.buyerDid ?? undefined;
    case ESCROW_METHOD.status:
      // Optional: a signed read by anyone but the buyer is checked against a DID payee.
      return party !== record.buyer && 'sig' in params && isDid(record.payee) ? record.payee : undefined;
    case ESCROW_METHOD.lock:
    case ESCROW_METHOD.bind:
    case ESCROW_METHOD.release:
    case ESCROW_METHOD.reclaim:
      return undefined;
  }
}

/** One request as the agent checks it: its method, its params as received, its authenticated caller. */
export interface SignedRequest {
  readonly method: EscrowMethod;
  readonly params: Record<string, JsonValue>;
  readonly party: string;
}

/** What the agent verified of one request: the DID that signed it and its envelope (kept as evidence). */
export interface VerifiedRequest {
  readonly did: string;
  readonly envelope: SignatureEnvelope;
  /** The params exactly as received, envelope included: what an arbiter re-verifies. */
  readonly signed: JsonValue;
}

/**
 * Verifies the Layer 7 §4 envelope of a request to a DID-bound escrow against the bound DID (L7 §3: the
 * signer must be the bound party, never just any DID). Requests the escrow binds to no DID are not
 * checked (`undefined`).
 * @throws AcmpError -36003 (missing, bad or another DID's envelope; a signed read or claim more than
 *   5 minutes from the agent's clock, `created_ms`), -36002 when the DID cannot be resolved.
 */
export async function verifyRequest(
  record: EscrowRecord | undefined,
  request: SignedRequest,
  context: { resolver: DidResolver; now: number; signal?: AbortSignal },
): Promise<VerifiedRequest | undefined> {
  const expectedDid = record && requiredSigner(record, request);
  if (expectedDid === undefined) return undefined;
  if (!('sig' in request.params))
    throw new AcmpError(ACMP_CODE.signatureInvalid, { check: 'envelope', reason: 'unsigned' });
  const verified = await verifyObject(request.params, {
    resolver: context.resolver,
    expectedDid,
    ...(context.signal ? { signal: context.signal } : {}),
  });
  if (
    FRESH.includes(request.method) &&
    Math.abs(context.now - verified.createdMs) > SIGNED_REQUEST_MAX_AGE_MS
  )
    throw new AcmpError(ACMP_CODE.signatureInvalid, { check: 'created_ms' });
  return { did: verified.did, envelope: verified.envelope, signed: request.params };
}

/**
 * Checks inside the transaction that the record still binds the DID the request was verified for (a bind
 * may have landed in between) — a claim on a DID payee is authorised by this signature.
 * @throws AcmpError -36003 when the escrow now needs a signature the request does not have.
 */
export function checkVerified(
  record: EscrowRecord,
  request: SignedRequest,
  verified: VerifiedRequest | undefined,
): void {
  const expectedDid = requiredSigner(record, request);
  if (expectedDid !== undefined && verified?.did !== expectedDid)
    throw new AcmpError(ACMP_CODE.signatureInvalid, { check: 'did' });
}

/** The envelope a status object shows for a signed claim or dispute (`null` when it was not signed). */
export function envelopeOf(signed: JsonValue | null): JsonValue {
  if (signed === null || typeof signed !== 'object' || Array.isArray(signed)) return null;
  const sig = signed.sig;
  return sig !== undefined && SignatureEnvelopeSchema.safeParse(sig).success ? sig : null;
}

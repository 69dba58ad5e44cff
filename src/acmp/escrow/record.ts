import type { JsonValue } from '../../shared/json.js';
import { formatCu } from './amounts.js';
import type { DisputeDefault } from './constants.js';
import { envelopeOf } from './did-parties.js';
import { encodeRoute, type PayeeRoute } from './payout-route.js';

/** The four Layer 4 states [L4 §2]. */
export type EscrowState = 'open' | 'claimed' | 'disputed' | 'closed';

/** A pending (or last) claim [L4 §4.5]. */
export interface EscrowClaim {
  readonly amount: bigint;
  readonly taskId: string;
  readonly proof: JsonValue | null;
  readonly filedAt: number;
  readonly windowEndsAt: number;
  /** The claim params as received with the payee's Layer 7 envelope (a DID payee's claim); else null. */
  readonly signed: JsonValue | null;
}

/** How a dispute ended: by the operator, or by the advertised default at its deadline (ours). */
export interface DisputeResolution {
  readonly toPayee: bigint;
  readonly toBuyer: bigint;
  readonly by: 'operator' | 'default';
  readonly at: number;
}

/** A dispute [L4 §4.6] with the deadline we add so that it always ends. */
export interface EscrowDispute {
  readonly reason: string;
  readonly evidence: JsonValue | null;
  /** The dispute params as received with the buyer's Layer 7 envelope (a DID buyer's dispute); else null. */
  readonly signed: JsonValue | null;
  readonly filedAt: number;
  readonly deadlineAt: number;
  readonly claim: EscrowClaim;
  /** The outcome advertised when the dispute was filed; it applies at the deadline (later policy changes do not). */
  readonly defaultOutcome: DisputeDefault;
  readonly resolution: DisputeResolution | null;
}

/**
 * The one record of an escrow. Amounts are nano-CU; `locked = released + reclaimed + remaining` always
 * holds, with `remaining` derived ({@link remainingOf}), so it cannot drift.
 */
export interface EscrowRecord {
  readonly escrowId: string;
  readonly tenant: string;
  /** The identity that locked it (L4 §1: the buyer role is the authenticated lock caller). */
  readonly buyer: string;
  /**
   * The buyer's DID (ours, docs/acmp-escrow.md "DID parties"): its authenticated identity when that is a
   * DID, else the lock's `buyer_did`; its disputes MUST be signed with it (Layer 7 §4.1). Null otherwise.
   */
  readonly buyerDid: string | null;
  /** The bound payee identity (a DID, Layer 7 §2, proves itself by signatures); null while unbound. */
  readonly payee: string | null;
  /** The A2A context of the escrow's task view. */
  readonly contextId: string;
  readonly state: EscrowState;
  readonly locked: bigint;
  readonly released: bigint;
  readonly reclaimed: bigint;
  readonly validUntil: number;
  readonly challengeWindowMs: number;
  /** Ours: the agreed price a claim may not exceed (bind `agreed_price_cu`). */
  readonly agreedPrice: bigint | null;
  readonly tier: string | null;
  readonly claim: EscrowClaim | null;
  readonly dispute: EscrowDispute | null;
  /** Task ids already claimed (one claim per task, ours). */
  readonly claimedTasks: readonly string[];
  /** A release or a paid claim happened (the bound-escrow guard of L4 §4.4 lifts). */
  readonly settled: boolean;
  /** Closed by expiry auto-reclaim (later mutations get -35004). */
  readonly expired: boolean;
  /** Number of transitions so far; transition ids derive from it. */
  readonly seq: number;
  /** How the payee's last payout was routed (L7 §6.4, docs/acmp-escrow.md "Payout configuration"); null before. */
  readonly payeeRoute: PayeeRoute | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** CU still held: locked − released − reclaimed. */
export function remainingOf(record: EscrowRecord): bigint {
  return record.locked - record.released - record.reclaimed;
}

/** When time next changes the escrow by itself (window end, dispute deadline, expiry); null when closed. */
export function nextDueOf(record: EscrowRecord): number | null {
  switch (record.state) {
    case 'open':
      return record.validUntil;
    case 'claimed':
      return record.claim?.windowEndsAt ?? null;
    case 'disputed':
      return record.dispute?.deadlineAt ?? null;
    case 'closed':
      return null;
  }
}

/**
 * The status object [L4 §4.7] plus our fields (`buyer_did`, `challenge_window_ms`, `agreed_price_cu`,
 * `expired`, `seq`, the Layer 7 envelope `sig` of a signed claim or dispute, and `payee_payout`: the
 * route of the payee's payouts, its account shown to the payee only, L4 §7.1).
 */
export function encodeStatus(record: EscrowRecord, viewer?: string): Record<string, JsonValue> {
  const claim = record.claim;
  const dispute = record.dispute;
  return {
    escrow_id: record.escrowId,
    state: record.state,
    locked_cu: formatCu(record.locked),
    released_cu: formatCu(record.released),
    reclaimed_cu: formatCu(record.reclaimed),
    remaining_cu: formatCu(remainingOf(record)),
    payee_id: record.payee,
    buyer_did: record.buyerDid,
    valid_until_ms: record.validUntil,
    claim: claim && encodeClaim(claim),
    dispute: dispute && {
      reason: dispute.reason,
      filed_ms: dispute.filedAt,
      resolution_deadline_ms: dispute.deadlineAt,
      default_outcome: dispute.defaultOutcome,
      claim: encodeClaim(dispute.claim),
      sig: envelopeOf(dispute.signed),
      resolution: dispute.resolution && {
        to_payee_cu: formatCu(dispute.resolution.toPayee),
        to_buyer_cu: formatCu(dispute.resolution.toBuyer),
        by: dispute.resolution.by,
        at_ms: dispute.resolution.at,
      },
    },
    challenge_window_ms: record.challengeWindowMs,
    agreed_price_cu: record.agreedPrice === null ? null : formatCu(record.agreedPrice),
    expired: record.expired,
    seq: record.seq,
    payee_payout:
      record.payeeRoute && encodeRoute(record.payeeRoute, viewer !== undefined && viewer === record.payee),
  };
}

function encodeClaim(claim: EscrowClaim): Record<string, JsonValue> {
  return {
    amount_cu: formatCu(claim.amount),
    task_id: claim.taskId,
    window_ends_ms: claim.windowEndsAt,
    // Layer 7 §4.1: the payee's envelope over its claim, kept as evidence.
    sig: envelopeOf(claim.signed),
  };
}

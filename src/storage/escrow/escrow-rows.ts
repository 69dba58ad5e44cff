import { z } from 'zod';
import type { EscrowRecord } from '../../acmp/escrow/record.js';
import { PayoutListSchema } from '../../acmp/escrow/payout-route.js';
import type { PayoutConfig, StoredOp } from '../../acmp/escrow/store.js';
import type { EscrowEvent, Payout } from '../../acmp/escrow/transitions.js';
import { isEscrowMethod } from '../../acmp/escrow/constants.js';
import { AcmpErrorObjectSchema } from '../../acmp/wire/messages.js';
import { LocalError } from '../../shared/errors.js';

/** The columns of an escrow row, in the order {@link decodeEscrowRow} reads them. */
export const ESCROW_COLUMNS =
  'escrow_id, tenant, buyer, buyer_did, payee, context_id, state, locked, released, reclaimed, valid_until, challenge_window_ms, agreed_price, tier, claim, dispute, claimed_tasks, settled, expired, seq, payee_payout, created_at, updated_at';

/** PostgreSQL returns bigint as text; SQLite as number (every stored amount is ≤ 2⁵³ − 1, amounts.ts). */
const Big = z.union([z.number().int(), z.string().regex(/^-?\d+$/), z.bigint()]).transform((v) => BigInt(v));
const Int = Big.transform(Number);
const Bool = z.union([z.number(), z.boolean()]).transform((v) => v === true || v === 1);

/** A claim as stored (JSON text; amounts as decimal strings of nano-CU). */
const ClaimJson = z.object({
  amount: Big,
  taskId: z.string(),
  proof: z.json(),
  filedAt: z.number(),
  windowEndsAt: z.number(),
  signed: z.json().default(null),
});
const DisputeJson = z.object({
  reason: z.string(),
  evidence: z.json(),
  signed: z.json().default(null),
  filedAt: z.number(),
  deadlineAt: z.number(),
  claim: ClaimJson,
  defaultOutcome: z.enum(['refund_buyer', 'pay_claim']).default('refund_buyer'),
  resolution: z
    .object({ toPayee: Big, toBuyer: Big, by: z.enum(['operator', 'default']), at: z.number() })
    .nullable(),
});

const RouteJson = z.union([
  z.object({
    rail: z.literal('credit-ledger'),
    account: z.string(),
    source: z.enum(['identity', 'configured']),
  }),
  z.object({ rail: z.null(), held: z.literal('no_supported_rail') }),
]);

const EscrowRowSchema = z.object({
  escrow_id: z.string(),
  tenant: z.string(),
  buyer: z.string(),
  buyer_did: z.string().nullable(),
  payee: z.string().nullable(),
  context_id: z.string(),
  state: z.enum(['open', 'claimed', 'disputed', 'closed']),
  locked: Big,
  released: Big,
  reclaimed: Big,
  valid_until: Int,
  challenge_window_ms: Int,
  agreed_price: Big.nullable(),
  tier: z.string().nullable(),
  claim: z.string().nullable(),
  dispute: z.string().nullable(),
  claimed_tasks: z.string(),
  settled: Bool,
  expired: Bool,
  seq: Int,
  payee_payout: z.string().nullable(),
  created_at: Int,
  updated_at: Int,
});

/**
 * Decodes a row of `escrows` (STYLE.md "Boundaries": rows are checked, never cast).
 * @throws LocalError `INVALID_STATE` for a malformed row.
 */
export function decodeEscrowRow(row: unknown): EscrowRecord {
  const parsed = EscrowRowSchema.safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'escrows row is malformed');
  const r = parsed.data;
  const claim = r.claim === null ? null : json(ClaimJson, r.claim);
  const dispute = r.dispute === null ? null : json(DisputeJson, r.dispute);
  return {
    escrowId: r.escrow_id,
    tenant: r.tenant,
    buyer: r.buyer,
    buyerDid: r.buyer_did,
    payee: r.payee,
    contextId: r.context_id,
    state: r.state,
    locked: r.locked,
    released: r.released,
    reclaimed: r.reclaimed,
    validUntil: r.valid_until,
    challengeWindowMs: r.challenge_window_ms,
    agreedPrice: r.agreed_price,
    tier: r.tier,
    claim: claim && { ...claim, proof: claim.proof },
    dispute: dispute && {
      ...dispute,
      evidence: dispute.evidence,
      claim: { ...dispute.claim, proof: dispute.claim.proof },
    },
    claimedTasks: json(z.array(z.string()), r.claimed_tasks),
    settled: r.settled,
    expired: r.expired,
    seq: r.seq,
    payeeRoute: r.payee_payout === null ? null : json(RouteJson, r.payee_payout),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** JSON text of a record part, bigints as decimal strings. */
export function encodeJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

const OpRowSchema = z.object({
  tenant: z.string(),
  party: z.string(),
  method: z.string().refine(isEscrowMethod),
  scope: z.string(),
  op_ref: z.string(),
  params_hash: z.string(),
  outcome: z.string(),
  escrow_id: z.string().nullable(),
  at: Int,
});
const OutcomeJson = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('result'), result: z.record(z.string(), z.json()) }),
  z.object({ kind: z.literal('error'), error: AcmpErrorObjectSchema }),
]);

/** Decodes a row of `escrow_ops`. */
export function decodeOpRow(row: unknown): StoredOp {
  const parsed = OpRowSchema.safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'escrow_ops row is malformed');
  const r = parsed.data;
  const outcome = json(OutcomeJson, r.outcome);
  return {
    key: {
      tenant: r.tenant,
      party: r.party,
      method: r.method,
      scope: r.scope,
      opRef: r.op_ref,
    },
    paramsHash: r.params_hash,
    // Decoded by the schemas above; JSON values are what z.json() admits.
    outcome: outcome,
    escrowId: r.escrow_id,
    at: r.at,
  };
}

const PayoutRowSchema = z.object({
  payout_id: z.string(),
  escrow_id: z.string(),
  tenant: z.string(),
  account: z.string(),
  amount: Big,
  kind: z.enum(['release', 'auto_release', 'reclaim', 'expiry', 'resolution']),
  created_at: Int,
  route: z.enum(['identity', 'configured', 'held']),
});

/** Decodes a row of `escrow_payouts`. */
export function decodePayoutRow(row: unknown): Payout {
  const parsed = PayoutRowSchema.safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'escrow_payouts row is malformed');
  const r = parsed.data;
  return {
    payoutId: r.payout_id,
    escrowId: r.escrow_id,
    tenant: r.tenant,
    account: r.account,
    amount: r.amount,
    kind: r.kind,
    at: r.created_at,
    route: r.route,
  };
}

const EventRowSchema = z.object({
  escrow_id: z.string(),
  seq: Int,
  kind: z.string(),
  actor: z.string(),
  at: Int,
  data: z.string(),
});

/** Decodes a row of `escrow_events`. */
export function decodeEventRow(row: unknown): EscrowEvent {
  const parsed = EventRowSchema.safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'escrow_events row is malformed');
  const r = parsed.data;
  return {
    escrowId: r.escrow_id,
    seq: r.seq,
    kind: r.kind,
    actor: r.actor,
    at: r.at,
    data: json(z.json(), r.data),
  };
}

/** A bigint column value (amount sums, balances). */
export function decodeBig(value: unknown): bigint {
  const parsed = Big.nullable().safeParse(value ?? null);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'amount column is malformed');
  return parsed.data ?? 0n;
}

function json<T extends z.ZodType>(schema: T, text: string): z.infer<T> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LocalError('INVALID_STATE', 'escrow JSON column is malformed');
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'escrow JSON column is malformed');
  return parsed.data;
}

const PayoutConfigRowSchema = z.object({
  tenant: z.string(),
  party: z.string(),
  payout: z.string(),
  set_by: z.enum(['party', 'operator']),
  at: Int,
});

/** Decodes a row of `escrow_payout_configs`. */
export function decodePayoutConfigRow(row: unknown): PayoutConfig {
  const parsed = PayoutConfigRowSchema.safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'escrow_payout_configs row is malformed');
  const r = parsed.data;
  return {
    tenant: r.tenant,
    party: r.party,
    payout: json(PayoutListSchema, r.payout),
    setBy: r.set_by,
    at: r.at,
  };
}

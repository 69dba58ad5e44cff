import { z } from 'zod';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { canonicalJson } from '../../shared/jcs.js';
import type { JsonValue } from '../../shared/json.js';
import { parseCu } from './amounts.js';
import { ESCROW_METHOD, type EscrowMethod } from './constants.js';
import { isDid } from './did-parties.js';
import { escrowError } from './errors.js';
import { parsePayoutList, type PayoutEntry } from './payout-route.js';

/*
 * Zod schemas written from Layer 4 §4. Objects are loose (unknown fields pass, as in Layer 1); amounts are
 * JSON numbers in CU on the wire and nano-CU (bigint) inside (amounts.ts). Our optional additions are
 * marked "ours" and documented in docs/acmp-escrow.md.
 */

const OpRef = z.string().min(1).max(128);
const EscrowId = z.string().min(1).max(64);
const PartyId = z.string().min(1).max(200);
const TaskId = z.string().min(1).max(128);
const Cu = z.number();
const Ms = z.int().nonnegative();

const LockParamsSchema = z.looseObject({
  op_ref: OpRef,
  amount_cu: Cu,
  valid_until_ms: Ms,
  tier: z.string().max(64).optional(),
  payee_id: PartyId.nullable().optional(),
  challenge_window_ms: z.int().optional(),
  /** Ours: the DID the buyer signs its disputes with (Layer 7 §4.1; docs/acmp-escrow.md "DID parties"). */
  buyer_did: z.string().refine(isDid, 'must be a DID').optional(),
});
const BindParamsSchema = z.looseObject({
  op_ref: OpRef,
  escrow_id: EscrowId,
  payee_id: PartyId,
  challenge_window_ms: z.int().optional(),
  /** Ours: the price agreed with the payee; claims above it are refused (docs/acmp-escrow.md). */
  agreed_price_cu: Cu.optional(),
});
const ReleaseParamsSchema = z.looseObject({
  op_ref: OpRef,
  escrow_id: EscrowId,
  amount_cu: Cu,
  payee_id: PartyId,
  task_id: TaskId.optional(),
  proof: z.json().optional(),
});
const ReclaimParamsSchema = z.looseObject({
  op_ref: OpRef,
  escrow_id: EscrowId,
  amount_cu: Cu.optional(),
});
const ClaimParamsSchema = z.looseObject({
  op_ref: OpRef,
  escrow_id: EscrowId,
  amount_cu: Cu,
  task_id: TaskId,
  proof: z.json(),
  // Ours (L7 §6.4 leaves an in-band field [OPEN]): the payee's payout list, registered with its claim.
  payout: z.unknown().optional(),
});
const DisputeParamsSchema = z.looseObject({
  op_ref: OpRef,
  escrow_id: EscrowId,
  reason: z.string().min(1).max(2_000),
  evidence: z.json().optional(),
});
const StatusParamsSchema = z.looseObject({ escrow_id: EscrowId });

/** Largest proof or evidence the agent stores (JCS bytes). */
const MAX_EVIDENCE_BYTES = 16 * 1024;

/** The params of any Layer 4 request [L4 §4]: a JSON object, read per method by {@link parseEscrowCommand}. */
export const EscrowParamsSchema = z.record(z.string(), z.json());
export type EscrowParams = z.infer<typeof EscrowParamsSchema>;

/** One parsed Layer 4 request, amounts in nano-CU. */
export type EscrowCommand =
  | {
      method: typeof ESCROW_METHOD.lock;
      opRef: string;
      amount: bigint;
      validUntil: number;
      tier: string | null;
      payee: string | null;
      windowMs: number | undefined;
      buyerDid: string | null;
    }
  | {
      method: typeof ESCROW_METHOD.bind;
      opRef: string;
      escrowId: string;
      payee: string;
      windowMs: number | undefined;
      agreedPrice: bigint | null;
    }
  | {
      method: typeof ESCROW_METHOD.release;
      opRef: string;
      escrowId: string;
      amount: bigint;
      payee: string;
      taskId: string | null;
      proof: JsonValue | undefined;
    }
  | { method: typeof ESCROW_METHOD.reclaim; opRef: string; escrowId: string; amount: bigint | null }
  | {
      method: typeof ESCROW_METHOD.claim;
      opRef: string;
      escrowId: string;
      amount: bigint;
      taskId: string;
      proof: JsonValue | undefined;
      /** Ours: the payee's payout list (L7 §6.4), registered when the claim is accepted; null without. */
      payout: readonly PayoutEntry[] | null;
    }
  | {
      method: typeof ESCROW_METHOD.dispute;
      opRef: string;
      escrowId: string;
      reason: string;
      evidence: JsonValue | undefined;
    }
  | { method: typeof ESCROW_METHOD.status; escrowId: string };

/** A mutating command (every one but status carries an `op_ref`, L4 §3). */
export type MutatingCommand = Exclude<EscrowCommand, { method: typeof ESCROW_METHOD.status }>;

/**
 * Parses the params of one Layer 4 method.
 * @throws AcmpError -32602 (schema, precision, oversized evidence), -35003 `non_positive_amount`.
 */
export function parseEscrowCommand(method: EscrowMethod, params: unknown): EscrowCommand {
  switch (method) {
    case ESCROW_METHOD.lock: {
      const p = schema(LockParamsSchema, params);
      return {
        method,
        opRef: p.op_ref,
        amount: amount(p.amount_cu, 'amount_cu'),
        validUntil: p.valid_until_ms,
        tier: p.tier ?? null,
        payee: p.payee_id ?? null,
        windowMs: p.challenge_window_ms,
        buyerDid: p.buyer_did ?? null,
      };
    }
    case ESCROW_METHOD.bind: {
      const p = schema(BindParamsSchema, params);
      const agreed = p.agreed_price_cu === undefined ? null : amount(p.agreed_price_cu, 'agreed_price_cu');
      return {
        method,
        opRef: p.op_ref,
        escrowId: p.escrow_id,
        payee: p.payee_id,
        windowMs: p.challenge_window_ms,
        agreedPrice: agreed,
      };
    }
    case ESCROW_METHOD.release: {
      const p = schema(ReleaseParamsSchema, params);
      return {
        method,
        opRef: p.op_ref,
        escrowId: p.escrow_id,
        amount: amount(p.amount_cu, 'amount_cu'),
        payee: p.payee_id,
        taskId: p.task_id ?? null,
        proof: bounded(p.proof, 'proof'),
      };
    }
    case ESCROW_METHOD.reclaim: {
      const p = schema(ReclaimParamsSchema, params);
      return {
        method,
        opRef: p.op_ref,
        escrowId: p.escrow_id,
        amount: p.amount_cu === undefined ? null : amount(p.amount_cu, 'amount_cu'),
      };
    }
    case ESCROW_METHOD.claim: {
      const p = schema(ClaimParamsSchema, params);
      return {
        method,
        opRef: p.op_ref,
        escrowId: p.escrow_id,
        amount: amount(p.amount_cu, 'amount_cu'),
        taskId: p.task_id,
        proof: bounded(p.proof, 'proof'),
        payout: p.payout === undefined ? null : parsePayoutList(p.payout),
      };
    }
    case ESCROW_METHOD.dispute: {
      const p = schema(DisputeParamsSchema, params);
      return {
        method,
        opRef: p.op_ref,
        escrowId: p.escrow_id,
        reason: p.reason,
        evidence: bounded(p.evidence, 'evidence'),
      };
    }
    case ESCROW_METHOD.status:
      return { method, escrowId: schema(StatusParamsSchema, params).escrow_id };
  }
}

function schema<T extends z.ZodType>(s: T, params: unknown): z.infer<T> {
  const parsed = s.safeParse(params);
  if (parsed.success) return parsed.data;
  // Paths and messages only, never values (docs/acmp-core.md "Malformed payloads").
  const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  throw new AcmpError(ACMP_CODE.invalidParams, { issues });
}

/** An amount as nano-CU: > 0 (else -35003, as L4 agents do) and a multiple of the unit (else -32602). */
function amount(cu: number, field: string): bigint {
  const parsed = parseCu(cu);
  if (!parsed.ok) throw new AcmpError(ACMP_CODE.invalidParams, { reason: parsed.reason, field });
  if (parsed.nano <= 0n) throw escrowError('invalidState', 'non_positive_amount', { field });
  return parsed.nano;
}

function bounded<T>(value: T, field: string): T {
  if (value !== undefined && Buffer.byteLength(canonicalJson(value)) > MAX_EVIDENCE_BYTES) {
    throw new AcmpError(ACMP_CODE.invalidParams, { reason: 'too_large', field });
  }
  return value;
}

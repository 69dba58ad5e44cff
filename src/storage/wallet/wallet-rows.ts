import { z } from 'zod';
import { LocalError } from '../../shared/errors.js';
import type { JsonValue } from '../../shared/json.js';
import { AUDIT_KINDS, type AuditEntry, type AuditKind, type Intent } from '../../wallet/store.js';
import { decodeBig } from '../escrow/escrow-rows.js';

/** The wallet's rows as the database returns them, decoded (never cast). */

const Num = z.union([z.number(), z.string().regex(/^\d+$/).transform(Number), z.bigint().transform(Number)]);
const Text = z.string().nullable();

const AuditRowSchema = z.object({
  wallet_id: z.string(),
  ts_ms: Num,
  kind: z.enum(AUDIT_KINDS),
  amount: z.unknown(),
  tier: Text,
  counterparty: Text,
  escrow_id: Text,
  task_id: Text,
  op_ref: Text,
  outcome: z.string(),
  detail: Text,
});

export function decodeAuditRow(row: unknown): AuditEntry {
  const parsed = AuditRowSchema.safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'wallet_audit row is malformed');
  const r = parsed.data;
  return {
    walletId: r.wallet_id,
    tsMs: r.ts_ms,
    kind: r.kind satisfies AuditKind,
    amount: r.amount === null ? null : decodeBig(r.amount),
    tier: r.tier,
    counterparty: r.counterparty,
    escrowId: r.escrow_id,
    taskId: r.task_id,
    opRef: r.op_ref,
    outcome: r.outcome,
    detail: r.detail === null ? null : jsonOf(r.detail),
  };
}

const IntentRowSchema = z.object({
  wallet_id: z.string(),
  op_ref: z.string(),
  method: z.string(),
  agent: z.string(),
  escrow_id: Text,
  params: z.string(),
  spend_id: Text,
  counterparty: Text,
  task_id: Text,
  state: z.enum(['pending', 'done', 'failed']),
  created_ms: Num,
});

export function decodeIntentRow(row: unknown): Intent {
  const parsed = IntentRowSchema.safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'wallet_intents row is malformed');
  const r = parsed.data;
  const params = z.record(z.string(), z.json()).safeParse(jsonOf(r.params));
  if (!params.success) throw new LocalError('INVALID_STATE', 'wallet_intents params are malformed');
  return {
    walletId: r.wallet_id,
    opRef: r.op_ref,
    method: r.method,
    agent: r.agent,
    escrowId: r.escrow_id,
    params: params.data,
    spendId: r.spend_id,
    counterparty: r.counterparty,
    taskId: r.task_id,
    state: r.state,
    createdMs: r.created_ms,
  };
}

function jsonOf(text: string): JsonValue {
  try {
    return z.json().parse(JSON.parse(text));
  } catch {
    throw new LocalError('INVALID_STATE', 'wallet row holds malformed JSON');
  }
}

import type { JsonValue } from '../../shared/json.js';
import type { Metrics } from '../../shared/metrics.js';
import type { EscrowAnswer } from './agent.js';
import { formatCu } from './amounts.js';
import { escrowError } from './errors.js';
import type { EscrowRecord } from './record.js';
import type { EscrowTx, StoredOp } from './store.js';
import type { Payout, TransitionLog } from './transitions.js';

/* The outcome side of one agent operation: what is written, what is answered, what is replayed. */

/** What one operation did: its answer, the payouts to run, the record it changed (if it did). */
export interface Done {
  readonly answer: EscrowAnswer;
  readonly payouts: readonly Payout[];
  readonly changed: EscrowRecord | undefined;
}

/** Writes what a transaction's transitions changed: the record, its log entries and pending payouts. */
export async function persist(
  tx: EscrowTx,
  before: EscrowRecord,
  log: TransitionLog,
): Promise<{ record: EscrowRecord; payouts: readonly Payout[]; changed: EscrowRecord | undefined }> {
  const done = log.result();
  if (done.record.seq === before.seq) return { record: before, payouts: [], changed: undefined };
  await tx.updateEscrow(done.record);
  await tx.addEvents(done.events);
  await tx.addPayouts(done.payouts);
  return { record: done.record, payouts: done.payouts, changed: done.record };
}

/** L4 §3: the first outcome again — unless the same op_ref comes with other params (ours: -35003). */
export function replay(stored: StoredOp, hash: string): EscrowAnswer {
  if (stored.paramsHash !== hash) throw escrowError('invalidState', 'op_ref_conflict');
  return toAnswer(stored.outcome);
}

export function toAnswer(outcome: StoredOp['outcome']): EscrowAnswer {
  return outcome.kind === 'result'
    ? { kind: 'result', result: outcome.result }
    : { kind: 'error', error: outcome.error };
}

export function lockResult(record: EscrowRecord): Record<string, JsonValue> {
  return {
    escrow_id: record.escrowId,
    state: record.state,
    amount_cu: formatCu(record.locked),
    valid_until_ms: record.validUntil,
    challenge_window_ms: record.challengeWindowMs,
    payee_id: record.payee,
  };
}

/**
 * Counts the CU a committed transaction moved (docs/operations.md "Metrics"): `locked` into escrow (a
 * lock that created its escrow), each new payout out of it by kind. Held payouts routed later were
 * counted when the transition that made them committed.
 */
export function countFunds(
  metrics: Metrics | undefined,
  done: Pick<Done, 'changed' | 'payouts'>,
  locked: bigint,
): void {
  if (!metrics) return;
  if (locked > 0n && done.changed) metrics.escrowFunds('locked', formatCu(locked));
  for (const payout of done.payouts) metrics.escrowFunds(payout.kind, formatCu(payout.amount));
}

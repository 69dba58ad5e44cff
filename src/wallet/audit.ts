import { formatCu, roundCu } from '../acmp/escrow/amounts.js';
import { ESCROW_METHOD } from '../acmp/escrow/constants.js';
import type { JsonValue } from '../shared/json.js';
import type { Breach } from './check.js';
import type { AuditKind, Intent } from './store.js';

/* What the audit log (Layer 7 §6.3) says about a Layer 4 operation and a denial. */

const AUDIT_KIND: Record<string, AuditKind> = {
  [ESCROW_METHOD.lock]: 'lock',
  [ESCROW_METHOD.bind]: 'bind',
  [ESCROW_METHOD.release]: 'release',
  [ESCROW_METHOD.reclaim]: 'reclaim',
  [ESCROW_METHOD.dispute]: 'dispute',
  [ESCROW_METHOD.claim]: 'claim',
};

/** The audit kind of a Layer 4 method. */
export function auditKindOf(method: string): AuditKind {
  return AUDIT_KIND[method] ?? 'lock';
}

/** The amount an operation moved: what was locked or released, what came back, the agreed price. */
export function auditAmount(intent: Intent, result: Record<string, JsonValue>): bigint | null {
  const cu =
    intent.method === ESCROW_METHOD.reclaim
      ? (result.reclaimed_cu ?? intent.params.amount_cu)
      : intent.method === ESCROW_METHOD.bind
        ? intent.params.agreed_price_cu
        : intent.params.amount_cu;
  return typeof cu === 'number' ? roundCu(cu, 'down') : null;
}

/** A breach in words, for the denial's message. */
export function describeBreach(b: Breach): string {
  const where = b.scope === 'wallet' ? '' : ' for this counterparty';
  return `${b.limit}${where} is ${formatCu(b.limitNano)} CU, ${formatCu(b.usedNano)} used, ${formatCu(b.requestedNano)} requested`;
}

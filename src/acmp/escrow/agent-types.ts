import type { JsonValue } from '../../shared/json.js';
import type { AcmpErrorObject } from '../wire/errors.js';
import type { Payout } from './transitions.js';

/** Who calls: the authenticated identity from the credential (never self-reported, L4 §1) and its tenant. */
export interface EscrowCaller {
  readonly tenant: string;
  readonly party: string;
}

/** The answer to one Layer 4 request: its result, or its error object (already safe for the wire). */
export type EscrowAnswer =
  | { readonly kind: 'result'; readonly result: Record<string, JsonValue> }
  | { readonly kind: 'error'; readonly error: AcmpErrorObject };

/**
 * Where payouts go (the L4 §7 payout rail). `pay` MUST be idempotent by `payoutId`. The default is the
 * agent's own credit ledger ({@link EscrowStore.applyPayout}).
 */
export interface PayoutRail {
  pay(payout: Payout, at: number): Promise<void>;
}

import { AcmpError, type AcmpErrorObject } from '../wire/errors.js';

/** One row of the Layer 4 code table. */
export interface EscrowErrorSpec {
  readonly code: number;
  readonly name: string;
  readonly message: string;
}

/**
 * The Layer 4 codes [L4 §5], the single source of truth for the escrow agent's errors. Cases a code covers
 * several of are told apart by `data.reason` (docs/acmp-escrow.md §3 "Messages": no new numeric codes).
 */
export const ESCROW_ERRORS = {
  notFound: { code: -35001, name: 'escrow_not_found', message: 'Escrow not found' },
  insufficientFunds: { code: -35002, name: 'insufficient_funds', message: 'Insufficient funds' },
  invalidState: { code: -35003, name: 'invalid_state', message: 'Not permitted in the current state' },
  expired: { code: -35004, name: 'escrow_expired', message: 'Escrow expired' },
  notAuthorized: { code: -35005, name: 'not_authorized', message: 'Not authorized' },
  exceedsRemaining: {
    code: -35006,
    name: 'amount_exceeds_remaining',
    message: 'Amount exceeds the remaining balance',
  },
  internal: { code: -35099, name: 'internal', message: 'Internal escrow agent error' },
} as const satisfies Record<string, EscrowErrorSpec>;

export type EscrowErrorKey = keyof typeof ESCROW_ERRORS;

const BY_CODE = new Map<number, EscrowErrorSpec>(Object.values(ESCROW_ERRORS).map((s) => [s.code, s]));

/** The table row of a Layer 4 code, or `undefined`. */
export function escrowErrorSpec(code: number): EscrowErrorSpec | undefined {
  return BY_CODE.get(code);
}

/** A Layer 4 protocol error with the table's message and `data.reason` (plus any further safe fields). */
export function escrowError(
  key: EscrowErrorKey,
  reason?: string,
  extra: Record<string, unknown> = {},
): AcmpError {
  const spec = ESCROW_ERRORS[key];
  const data =
    reason === undefined && Object.keys(extra).length === 0
      ? undefined
      : { ...(reason === undefined ? {} : { reason }), ...extra };
  return new AcmpError(spec.code, data, { message: spec.message });
}

/**
 * Codes an escrow agent sends as they are: Layer 4 codes, the JSON-RPC request codes, and the Layer 7 §7
 * identity codes (cross-cutting: any endpoint that verifies signatures MAY return them).
 */
function passesThrough(code: number): boolean {
  return BY_CODE.has(code) || (code <= -32600 && code >= -32603) || (code <= -36001 && code >= -36004);
}

/**
 * The escrow agent's one outbound mapper (STYLE.md "Errors"): its own protocol errors pass; anything else
 * becomes -35099 with the generic message (the cause is logged by the caller, never sent).
 */
export function toEscrowErrorObject(error: unknown): AcmpErrorObject {
  if (error instanceof AcmpError && passesThrough(error.code)) return error.toObject();
  return { code: ESCROW_ERRORS.internal.code, message: ESCROW_ERRORS.internal.message };
}

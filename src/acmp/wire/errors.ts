import { z } from 'zod';
import { ProtocolError } from '../../shared/errors.js';
import type { JsonValue } from '../../shared/json.js';

/** One row of the ACMP code table. */
export interface AcmpErrorSpec {
  readonly code: number;
  readonly name: string;
  readonly message: string;
  /** Whether the same request with a NEW task_id may succeed later (a retry with the same task_id replays). */
  readonly retryable: boolean;
}

/**
 * The single source of truth for ACMP error codes: Layer 1 §3.3 (-33xxx), Layer 6 §6 (-34xxx), Layer 7 §7 (-36xxx) plus the JSON-RPC 2.0 codes we
 * answer malformed ACMP payloads with (docs/acmp-core.md "Malformed payloads").
 */
export const ACMP_ERRORS = {
  budgetExceeded: { code: -33001, name: 'budget_exceeded', message: 'Budget exceeded', retryable: false },
  capabilityNotFound: {
    code: -33002,
    name: 'capability_not_found',
    message: 'Capability not found',
    retryable: false,
  },
  timeout: { code: -33003, name: 'timeout', message: 'Task timed out', retryable: true },
  cancelled: { code: -33004, name: 'cancelled', message: 'Task cancelled', retryable: false },
  escrowInvalid: { code: -33005, name: 'escrow_invalid', message: 'Escrow invalid', retryable: false },
  proofUnsupported: {
    code: -33006,
    name: 'proof_unsupported',
    message: 'Proof method unsupported',
    retryable: false,
  },
  featureUnsupported: {
    code: -33007,
    name: 'feature_unsupported',
    message: 'Feature unsupported',
    retryable: false,
  },
  internal: { code: -33099, name: 'internal', message: 'Internal provider error', retryable: true },
  // Layer 6 §6 (negotiation).
  offerNotFound: { code: -34001, name: 'offer_not_found', message: 'Offer not found', retryable: false },
  offerExpired: { code: -34002, name: 'offer_expired', message: 'Offer expired', retryable: false },
  alreadyAccepted: {
    code: -34003,
    name: 'already_accepted',
    message: 'Offer already accepted',
    retryable: false,
  },
  // Layer 7 §7 (identity and signatures; docs/acmp-identity.md). A DID that cannot be resolved now may
  // resolve later (its host was down); the other three are verdicts on what was presented.
  identityProofFailed: {
    code: -36001,
    name: 'identity_proof_failed',
    message: 'Identity proof failed',
    retryable: false,
  },
  didUnresolvable: { code: -36002, name: 'did_unresolvable', message: 'DID unresolvable', retryable: true },
  signatureInvalid: {
    code: -36003,
    name: 'signature_invalid',
    message: 'Signature invalid',
    retryable: false,
  },
  credentialInvalid: {
    code: -36004,
    name: 'credential_invalid',
    message: 'Credential invalid',
    retryable: false,
  },
  invalidRequest: {
    code: -32600,
    name: 'invalid_request',
    message: 'Invalid ACMP payload',
    retryable: false,
  },
  methodNotFound: {
    code: -32601,
    name: 'method_not_found',
    message: 'Unknown ACMP method',
    retryable: false,
  },
  invalidParams: { code: -32602, name: 'invalid_params', message: 'Invalid params', retryable: false },
} as const satisfies Record<string, AcmpErrorSpec>;

/** A key of {@link ACMP_ERRORS}. */
export type AcmpErrorKey = keyof typeof ACMP_ERRORS;

/** A code from {@link ACMP_ERRORS}. */
export type AcmpErrorCode = (typeof ACMP_ERRORS)[AcmpErrorKey]['code'];

/** Codes by key, e.g. `ACMP_CODE.timeout === -33003`. */
export const ACMP_CODE = Object.fromEntries(Object.entries(ACMP_ERRORS).map(([k, v]) => [k, v.code])) as {
  readonly [K in AcmpErrorKey]: (typeof ACMP_ERRORS)[K]['code'];
};

const BY_CODE = new Map<number, AcmpErrorSpec>(Object.values(ACMP_ERRORS).map((s) => [s.code, s]));

/** The table row for a code, or `undefined` for a code we do not know (a peer may send others). */
export function acmpErrorSpec(code: number): AcmpErrorSpec | undefined {
  return BY_CODE.get(code);
}

/** The wire shape of an ACMP error (Layer 1 §3.3; the A2A binding's `acmp_error` root value). */
export const AcmpErrorObjectSchema = z.looseObject({
  code: z.int(),
  message: z.string(),
  data: z.json().optional(),
});
export type AcmpErrorObject = z.infer<typeof AcmpErrorObjectSchema>;

/**
 * An ACMP protocol error (code space `acmp`). The message defaults to the table's message; callers put
 * details into `data`, never personal data.
 */
export class AcmpError extends ProtocolError<number> {
  override readonly name: string = 'AcmpError';
  constructor(code: number, data?: unknown, options?: { message?: string; cause?: unknown }) {
    const message = options?.message ?? acmpErrorSpec(code)?.message ?? 'ACMP error';
    super('acmp', code, { message, data, cause: options?.cause });
  }

  /** Rebuilds an error received from a peer (`acmp_error` / JSON-RPC `error`). */
  static fromObject(error: AcmpErrorObject): AcmpError {
    return new AcmpError(error.code, error.data, { message: error.message });
  }

  /** Whether a retry with a new task_id may succeed (unknown codes: false). */
  get retryable(): boolean {
    return acmpErrorSpec(this.code)?.retryable ?? false;
  }

  /** The wire object; `data` is left out when undefined (callers only put JSON values into `data`). */
  toObject(): AcmpErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data as JsonValue };
  }
}

/** Type guard for {@link AcmpError}. */
export function isAcmpError(value: unknown, code?: number): value is AcmpError {
  return value instanceof AcmpError && (code === undefined || value.code === code);
}

/**
 * The one mapper on the way out (STYLE.md "Errors"): an {@link AcmpError} passes through; anything else
 * becomes -33099 with the generic message. The cause is never put on the wire; callers log it.
 */
export function toAcmpErrorObject(error: unknown, data?: unknown): AcmpErrorObject {
  if (error instanceof AcmpError) return error.toObject();
  return new AcmpError(ACMP_CODE.internal, data).toObject();
}

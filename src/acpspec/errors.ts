import { ProtocolError, isProtocolError } from '../shared/errors.js';

/** One row of the ACPspec error table. */
export interface AcpErrorSpec {
  readonly httpStatus: number;
  /** Whether sending the same envelope again may succeed. */
  readonly retryable: boolean;
  readonly message: string;
}

/**
 * The ACPspec error table: the single source of truth for codes, HTTP statuses, retryability and default
 * messages (docs/acpspec-core.md "Errors"; `ACP_PARENT_UNKNOWN` and `ACP_CONSENT_REQUIRED` come from the seed).
 */
export const ACP_ERRORS = {
  ACP_PARENT_UNKNOWN: {
    httpStatus: 409,
    retryable: false,
    message: 'parent envelope is not held; send a snapshot',
  },
  ACP_CONSENT_REQUIRED: {
    httpStatus: 403,
    retryable: false,
    message: 'consent required to receive this personal data',
  },
  ACP_SCHEMA_INVALID: {
    httpStatus: 400,
    retryable: false,
    message: 'envelope does not validate against the schema',
  },
  ACP_VERSION_UNSUPPORTED: { httpStatus: 400, retryable: false, message: 'envelope version is not accepted' },
  ACP_KIND_NOT_ACCEPTED: { httpStatus: 422, retryable: false, message: 'envelope kind is not accepted' },
  ACP_PATCH_FAILED: {
    httpStatus: 422,
    retryable: false,
    message: 'patch does not apply to the parent state',
  },
  ACP_POLICY_VIOLATION: {
    httpStatus: 422,
    retryable: false,
    message: 'envelope violates the delta or event stream policy',
  },
  ACP_ENVELOPE_CONFLICT: { httpStatus: 409, retryable: false, message: 'envelope conflicts with held state' },
  ACP_TRANSACTION_UNKNOWN: { httpStatus: 404, retryable: false, message: 'transaction is not known' },
  ACP_TRANSPORT_INSECURE: {
    httpStatus: 403,
    retryable: false,
    message: 'personal data requires a TLS transport',
  },
  ACP_MESSAGE_NONCONFORMANT: {
    httpStatus: 400,
    retryable: false,
    message: 'message does not follow the binding',
  },
  ACP_PAYLOAD_TOO_LARGE: {
    httpStatus: 413,
    retryable: false,
    message: 'request body is larger than the receiver accepts',
  },
  ACP_INTERNAL: { httpStatus: 500, retryable: true, message: 'internal error' },
} as const satisfies Record<string, AcpErrorSpec>;

/** An ACPspec error code. */
export type AcpErrorCode = keyof typeof ACP_ERRORS;

/** The ids an error object may name. */
export interface AcpErrorIds {
  envelope_id?: string | undefined;
  transaction_id?: string | undefined;
}

/** The wire error object (docs/acpspec-binding.md "A2A binding": `acp_error`). */
export interface AcpErrorObject {
  code: AcpErrorCode;
  message: string;
  envelope_id?: string;
  transaction_id?: string;
  retryable: boolean;
  details?: unknown;
}

/** One validation issue: where (JSON Pointer) and which rule; never the offending value. */
export interface AcpIssue {
  pointer: string;
  keyword: string;
  message: string;
}

/** What an {@link AcpError} carries besides its code and message. */
export interface AcpErrorOptions {
  /** The wire `details`; it MUST hold no personal data (ids, pointers, codes and states only). */
  details?: unknown;
  cause?: unknown;
  ids?: AcpErrorIds;
}

/**
 * An ACPspec protocol error (space `acp`). `data` becomes the wire `details`; it MUST hold no personal
 * data (ids, pointers, codes and states only). `ids` are attached by the receiver once the envelope
 * validated, so they are known to be well-formed.
 */
export class AcpError extends ProtocolError<AcpErrorCode> {
  override readonly name: string = 'AcpError';
  ids: AcpErrorIds;
  /** `message` defaults to the table's message for `code`. */
  constructor(code: AcpErrorCode, message?: string, options?: AcpErrorOptions) {
    super('acp', code, {
      message: message ?? ACP_ERRORS[code].message,
      data: options?.details,
      cause: options?.cause,
    });
    this.ids = options?.ids ?? {};
  }

  /** HTTP status from the table. */
  get httpStatus(): number {
    return ACP_ERRORS[this.code].httpStatus;
  }

  /** Retryability from the table. */
  get retryable(): boolean {
    return ACP_ERRORS[this.code].retryable;
  }
}

/** Type guard for {@link AcpError}, optionally of one code. */
export function isAcpError(value: unknown, code?: AcpErrorCode): value is AcpError {
  return value instanceof AcpError && (code === undefined || value.code === code);
}

/** Type guard for a known ACPspec code string. */
function isAcpErrorCode(value: unknown): value is AcpErrorCode {
  return typeof value === 'string' && Object.hasOwn(ACP_ERRORS, value);
}

/** The schema's `$defs/id` (transaction ids, event ids, party keys). */
const ID_SHAPE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** True for a string of the schema's id shape: anything else can never name a held transaction. */
export function isAcpId(value: unknown): value is string {
  return typeof value === 'string' && ID_SHAPE.test(value);
}

/** An {@link AcpError}, or an `acp`-space ProtocolError whose code is in the table. */
function isKnownAcpError(error: unknown): error is ProtocolError<AcpErrorCode> {
  return isAcpError(error) || (isProtocolError(error, 'acp') && isAcpErrorCode(error.code));
}

/**
 * The one outbound mapper: an {@link AcpError} (or an `acp`-space ProtocolError) passes through with its
 * table entry; anything else becomes `ACP_INTERNAL` with the generic message — the cause is for the log,
 * never the wire. Ids that do not look like ids are dropped so no field value is echoed.
 */
export function toAcpErrorObject(error: unknown, ids?: AcpErrorIds): AcpErrorObject {
  const known = isKnownAcpError(error) ? error : undefined;
  const code: AcpErrorCode = known ? known.code : 'ACP_INTERNAL';
  const spec = ACP_ERRORS[code];
  const out: AcpErrorObject = {
    code,
    message: known ? known.message : spec.message,
    retryable: spec.retryable,
  };
  const merged = { ...ids, ...(isAcpError(error) ? error.ids : {}) };
  if (merged.envelope_id !== undefined && ID_SHAPE.test(merged.envelope_id))
    out.envelope_id = merged.envelope_id;
  if (merged.transaction_id !== undefined && ID_SHAPE.test(merged.transaction_id))
    out.transaction_id = merged.transaction_id;
  const details = known?.data;
  if (details !== undefined) out.details = details;
  return out;
}

/**
 * Rebuilds an {@link AcpError} from a peer's error object (sender side). An unknown code becomes
 * `ACP_INTERNAL`; the peer's message is kept since it came over the wire already.
 */
export function fromAcpErrorObject(object: {
  code?: unknown;
  message?: unknown;
  details?: unknown;
}): AcpError {
  const code = isAcpErrorCode(object.code) ? object.code : 'ACP_INTERNAL';
  const message = typeof object.message === 'string' ? object.message : undefined;
  return new AcpError(code, message, { details: object.details });
}

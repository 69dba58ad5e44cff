/**
 * The two error families (STYLE.md "Errors").
 *
 * - {@link ProtocolError}: crosses the wire. Carries a code from a spec's code space (ACMP -33xxx numbers,
 *   ACPspec `ACP_*` strings, host codes), a message safe to show a peer, and optional JSON `data`.
 * - {@link LocalError}: never crosses the wire (timeouts inside the process, closed streams, bad config).
 *
 * Each binding keeps one table per code space; constructors here stay generic.
 */
export class ProtocolError<C extends string | number = string | number> extends Error {
  override readonly name: string = 'ProtocolError';
  /** The code space this error belongs to (`acmp`, `acp`, `host`). */
  readonly space: string;
  readonly code: C;
  readonly data: unknown;
  constructor(space: string, code: C, details: ProtocolErrorDetails) {
    super(details.message, details.cause === undefined ? undefined : { cause: details.cause });
    this.space = space;
    this.code = code;
    this.data = details.data;
  }
}

/** What a {@link ProtocolError} says besides its code space and code. */
export interface ProtocolErrorDetails {
  /** Safe to show a peer: no personal data, no internals. */
  message: string;
  /** JSON for the wire's `data` (or `details`); undefined: none. */
  data?: unknown;
  /** Logged, never sent. */
  cause?: unknown;
}

/** Codes for errors that stay inside the process. */
export type LocalErrorCode =
  | 'TIMEOUT'
  | 'ABORTED'
  | 'STREAM_CLOSED'
  | 'CONFIG_INVALID'
  /** The database cannot be reached or used (down, missing, credentials refused). */
  | 'DATABASE_UNAVAILABLE'
  /** The database lacks migrations this build needs (run `a2a-commerce migrate`). */
  | 'DATABASE_NOT_MIGRATED'
  | 'NOT_FOUND'
  | 'INVALID_STATE'
  /** The request repeats a reference already used for something else (an operator's deposit `--op-ref`). */
  | 'CONFLICT'
  /** The peer answered the call with a transport-level refusal (authentication, malformed request):
   * retrying the same call cannot help. */
  | 'REFUSED'
  /** The buyer's wallet refused a spend before anything was sent: a limit would be exceeded (Layer 7 §6.2). */
  | 'SPEND_DENIED';

/** An error that never crosses the wire (STYLE.md "Errors"). */
export class LocalError extends Error {
  override readonly name: string = 'LocalError';
  readonly code: LocalErrorCode;
  constructor(code: LocalErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Type guard for {@link ProtocolError} of a given code space. */
export function isProtocolError(value: unknown, space?: string): value is ProtocolError {
  return value instanceof ProtocolError && (space === undefined || value.space === space);
}

/** Type guard for {@link LocalError}. */
export function isLocalError(value: unknown, code?: LocalErrorCode): value is LocalError {
  return value instanceof LocalError && (code === undefined || value.code === code);
}

/**
 * The `code` property of a thrown value, undecoded: Node's system errors (`ENOENT`, `EADDRINUSE`), driver
 * errors (`SQLITE_CONSTRAINT_…`, PostgreSQL SQLSTATEs), `jose`'s `ERR_JWS_…`, or either family's code.
 * Undefined when the value is not an object or carries no `code`; never throws (not even on `null`).
 */
export function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

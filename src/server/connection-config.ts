import { LocalError } from '../shared/errors.js';

/**
 * How long connections may take and how many may be open, on the HTTP(S) port and the gRPC port
 * (docs/host.md "Connections"). Every duration is in milliseconds.
 */
export interface ConnectionLimits {
  /**
   * From connect to a complete request head: HTTP/1.1 headers (Node's `headersTimeout`), the TLS
   * handshake on either port, and on gRPC the HTTP/2 client preface.
   */
  readonly headersTimeoutMs: number;
  /** From connect to the whole request received, body included (Node's `requestTimeout`); 0 = none. */
  readonly requestTimeoutMs: number;
  /** How long an idle HTTP/1.1 keep-alive connection stays open between requests. */
  readonly keepAliveTimeoutMs: number;
  /** Open connections per port (HTTP and gRPC each); the next one is closed at once. */
  readonly maxConnections: number;
  /** gRPC: the server pings every connection this often … */
  readonly grpcKeepaliveMs: number;
  /** … and closes it when the ping is not answered within this. */
  readonly grpcKeepaliveTimeoutMs: number;
  /** gRPC: a connection without a call for this long is sent GOAWAY (clients reconnect on demand). */
  readonly grpcIdleTimeoutMs: number;
}

/** Production defaults: short enough that idle and slow sockets cannot pile up, long for real clients. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
  grpcKeepaliveMs: 30_000,
  grpcKeepaliveTimeoutMs: 10_000,
  grpcIdleTimeoutMs: 300_000,
};

/** The flag of each limit (`serve --headers-timeout-ms 5000`). */
export const CONNECTION_FLAGS = {
  headersTimeoutMs: 'headers-timeout-ms',
  requestTimeoutMs: 'request-timeout-ms',
  keepAliveTimeoutMs: 'keep-alive-timeout-ms',
  maxConnections: 'max-connections',
  grpcKeepaliveMs: 'grpc-keepalive-ms',
  grpcKeepaliveTimeoutMs: 'grpc-keepalive-timeout-ms',
  grpcIdleTimeoutMs: 'grpc-idle-timeout-ms',
} as const satisfies Record<keyof ConnectionLimits, string>;

/** The environment variable of each limit. */
export const CONNECTION_ENV = {
  headersTimeoutMs: 'A2AC_HEADERS_TIMEOUT_MS',
  requestTimeoutMs: 'A2AC_REQUEST_TIMEOUT_MS',
  keepAliveTimeoutMs: 'A2AC_KEEP_ALIVE_TIMEOUT_MS',
  maxConnections: 'A2AC_MAX_CONNECTIONS',
  grpcKeepaliveMs: 'A2AC_GRPC_KEEPALIVE_MS',
  grpcKeepaliveTimeoutMs: 'A2AC_GRPC_KEEPALIVE_TIMEOUT_MS',
  grpcIdleTimeoutMs: 'A2AC_GRPC_IDLE_TIMEOUT_MS',
} as const satisfies Record<keyof ConnectionLimits, string>;

/** Flag values as the CLI parsed them. */
export type ConnectionFlags = { [K in keyof ConnectionLimits as (typeof CONNECTION_FLAGS)[K]]?: string };

/** The range each limit may take; 0 is allowed only where it means "no limit" to Node. */
const RANGES: Record<keyof ConnectionLimits, { min: number; max: number }> = {
  headersTimeoutMs: { min: 100, max: 600_000 },
  requestTimeoutMs: { min: 0, max: 3_600_000 },
  keepAliveTimeoutMs: { min: 100, max: 600_000 },
  maxConnections: { min: 1, max: 1_000_000 },
  grpcKeepaliveMs: { min: 100, max: 7_200_000 },
  grpcKeepaliveTimeoutMs: { min: 100, max: 600_000 },
  grpcIdleTimeoutMs: { min: 100, max: 86_400_000 },
};

/**
 * Resolves the connection limits: flag, then environment variable, then {@link DEFAULT_CONNECTION_LIMITS}.
 * @throws LocalError `CONFIG_INVALID` naming the flag, when a value is not an integer in its range or the
 *   request timeout is shorter than the headers timeout (Node requires `requestTimeout >= headersTimeout`).
 */
export function resolveConnectionLimits(
  flags: ConnectionFlags,
  env: Record<string, string | undefined>,
): ConnectionLimits {
  const limits = { ...DEFAULT_CONNECTION_LIMITS };
  for (const key of Object.keys(RANGES) as (keyof ConnectionLimits)[]) {
    const value = flags[CONNECTION_FLAGS[key]] ?? (env[CONNECTION_ENV[key]] || undefined);
    if (value !== undefined) limits[key] = integer(key, value);
  }
  if (limits.requestTimeoutMs !== 0 && limits.requestTimeoutMs < limits.headersTimeoutMs)
    fail(
      `--${CONNECTION_FLAGS.requestTimeoutMs} (${limits.requestTimeoutMs}) must be 0 or at least --${CONNECTION_FLAGS.headersTimeoutMs} (${limits.headersTimeoutMs})`,
    );
  return limits;
}

function integer(key: keyof ConnectionLimits, value: string): number {
  const name = `--${CONNECTION_FLAGS[key]} / ${CONNECTION_ENV[key]}`;
  const { min, max } = RANGES[key];
  if (!/^\d+$/.test(value.trim())) fail(`${name} must be an integer, got "${value}"`);
  const n = Number(value.trim());
  if (n < min || n > max) fail(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function fail(message: string): never {
  throw new LocalError('CONFIG_INVALID', message);
}

import { LocalError } from '../shared/errors.js';
import type { BearerToken } from '../shared/identity.js';
import { resolveOperatorTokens } from './operator-config.js';
import { readTokensFile, resolveTokens } from './tokens-config.js';
import type { LogLevel } from '../shared/logger.js';
import { resolveAllowedHosts } from './allowed-hosts.js';
import {
  CONNECTION_ENV,
  resolveConnectionLimits,
  type ConnectionFlags,
  type ConnectionLimits,
} from './connection-config.js';
import { resolveCallerLimits, type CallerLimitFlags, type CallerLimits } from './caller-limits.js';
import { resolveShutdown, SHUTDOWN_ENV, type ShutdownConfig, type ShutdownFlags } from './shutdown-config.js';
import {
  RETENTION_ENV,
  resolveRetention,
  type RetentionConfig,
  type RetentionFlags,
} from './retention-config.js';
import {
  METRICS_ENV,
  resolveMetricsConfig,
  type MetricsConfig,
  type MetricsFlags,
} from './metrics-config.js';

/** How the host serves TLS. */
export type TlsConfig =
  { mode: 'off' } | { mode: 'files'; cert: string; key: string } | { mode: 'self-signed' };

/** The host's whole configuration, typed. */
export interface HostConfig {
  host: string;
  port: number;
  /** Port of the gRPC interface (0: any free one); undefined: no gRPC (the default). */
  grpcPort: number | undefined;
  dataDir: string;
  /** `postgres://…`, `sqlite:<file>`, `memory`, or undefined for SQLite under dataDir. */
  db: string | undefined;
  /** Accepted bearer tokens, each with the identity of its holder (empty: no authentication). */
  tokens: BearerToken[];
  /** Operator credentials of `/console` (docs/console.md); empty: the console is not served. */
  operatorTokens: BearerToken[];
  tls: TlsConfig;
  bodyLimitBytes: number;
  /** Public base URL for the card when the host sits behind a proxy; default from host/port/TLS. */
  publicUrl: string | undefined;
  logLevel: LogLevel;
  /** Declares that this host handles no personal data (allows ACPspec on a non-TLS interface). */
  noPersonalData: boolean;
  /** Origins push-notification webhooks may target; empty = push notifications off. */
  pushAllow: string[];
  /** The Layer 7 identity key file (docs/acmp-identity.md); the host has a DID when it holds a key. */
  identityKey: string;
  /** Host names requests may address besides the derived ones (src/server/allowed-hosts.ts). */
  allowedHosts: string[];
  /** Timeouts and caps of the HTTP(S) and gRPC connections. */
  connections: ConnectionLimits;
  /** Accept callers identified by a DID-signed token next to the static tokens (docs/host.md). */
  acceptDidCallers: boolean;
  /** Resolve callers' did:web also at private and loopback addresses (off: public addresses only). */
  didPrivateHosts: boolean;
  /** Limits per caller identity over every tenant and binding (src/server/caller-limits.ts). */
  limits: CallerLimits;
  /** The scrape token, the metrics port and the process metrics (docs/operations.md "Metrics"). */
  metrics: MetricsConfig;
  /** How the host stops: drain delay and grace (src/server/shutdown-config.ts). */
  shutdown: ShutdownConfig;
  /** Retention of ended work (src/server/retention-config.ts; docs/operations.md "Retention"). */
  retention: RetentionConfig;
}

/** Flag values as the CLI parsed them (all optional; env and defaults fill the rest). */
export interface HostFlags
  extends ConnectionFlags, CallerLimitFlags, MetricsFlags, ShutdownFlags, RetentionFlags {
  host?: string;
  port?: string;
  'grpc-port'?: string;
  'data-dir'?: string;
  db?: string;
  token?: string[];
  'tokens-file'?: string;
  'operator-token'?: string[];
  'tls-cert'?: string;
  'tls-key'?: string;
  'tls-self-signed'?: boolean;
  'no-tls'?: boolean;
  'body-limit'?: string;
  'public-url'?: string;
  'log-level'?: string;
  'no-personal-data'?: boolean;
  'push-allow'?: string[];
  'identity-key'?: string;
  'allowed-host'?: string[];
  'accept-did-callers'?: boolean;
  'did-private-hosts'?: boolean;
}

/** Environment variable for each setting (README's configuration table is generated from the same list). */
export const ENV = {
  host: 'A2AC_HOST',
  port: 'A2AC_PORT',
  grpcPort: 'A2AC_GRPC_PORT',
  dataDir: 'A2AC_DATA_DIR',
  db: 'A2AC_DB',
  tokens: 'A2AC_TOKENS',
  tokensFile: 'A2AC_TOKENS_FILE',
  operatorToken: 'A2AC_OPERATOR_TOKEN',
  tlsCert: 'A2AC_TLS_CERT',
  tlsKey: 'A2AC_TLS_KEY',
  tlsSelfSigned: 'A2AC_TLS_SELF_SIGNED',
  noTls: 'A2AC_NO_TLS',
  bodyLimit: 'A2AC_BODY_LIMIT',
  publicUrl: 'A2AC_PUBLIC_URL',
  logLevel: 'A2AC_LOG_LEVEL',
  noPersonalData: 'A2AC_NO_PERSONAL_DATA',
  pushAllow: 'A2AC_PUSH_ALLOW',
  identityKey: 'A2AC_IDENTITY_KEY',
  allowedHosts: 'A2AC_ALLOWED_HOSTS',
  ...CONNECTION_ENV,
  acceptDidCallers: 'A2AC_ACCEPT_DID_CALLERS',
  didPrivateHosts: 'A2AC_DID_PRIVATE_HOSTS',
  ...METRICS_ENV,
  ...SHUTDOWN_ENV,
  ...RETENTION_ENV,
} as const;

const DEFAULTS = {
  host: '127.0.0.1',
  port: 8443,
  dataDir: '.data',
  bodyLimitBytes: 1024 * 1024,
} as const;

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
const PORT_RANGE = { min: 0, max: 65535 };

function fail(message: string): never {
  throw new LocalError('CONFIG_INVALID', message);
}

function bool(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  return fail(`${name} must be true or false, got "${value}"`);
}

function integer(name: string, value: string, { min, max }: { min: number; max: number }): number {
  if (!/^\d+$/.test(value)) fail(`${name} must be an integer, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) fail(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** Parses a size such as `1048576`, `512k`, `1m`. */
function parseSize(name: string, value: string): number {
  const match = /^(\d+)\s*([kKmM]?)[iI]?[bB]?$/.exec(value.trim());
  if (!match) fail(`${name} must be a size like 1048576, 512k or 1m, got "${value}"`);
  // The unit group always takes part in a match (empty without a unit).
  const [, digits, suffix = ''] = match;
  const unit = suffix.toLowerCase();
  const n = Number(digits) * (unit === 'k' ? 1024 : unit === 'm' ? 1024 * 1024 : 1);
  if (n < 1024 || n > 64 * 1024 * 1024) fail(`${name} must be between 1k and 64m`);
  return n;
}

/**
 * Resolves the host configuration: flag, then environment variable, then default.
 * @throws LocalError `CONFIG_INVALID` with a message naming the setting.
 */
export function resolveHostConfig(flags: HostFlags, env: Record<string, string | undefined>): HostConfig {
  const pick = (flag: string | undefined, key: keyof typeof ENV): string | undefined =>
    flag ?? (env[ENV[key]] || undefined);
  const port = pick(flags.port, 'port');
  const grpcPort = pick(flags['grpc-port'], 'grpcPort');
  const tokensFile = pick(flags['tokens-file'], 'tokensFile');
  const fileEntries = tokensFile === undefined ? [] : readTokensFile(tokensFile);
  const tokens = resolveTokens(
    flags.token ?? env[ENV.tokens]?.split(','),
    fileEntries.filter((e) => e.role === 'caller'),
  );
  const operatorTokens = resolveOperatorTokens(
    [
      ...(flags['operator-token'] ?? env[ENV.operatorToken]?.split(',') ?? [])
        .map((e) => e.trim())
        .filter((e) => e !== '')
        .map((entry) => ({ entry, where: '--operator-token/A2AC_OPERATOR_TOKEN' })),
      ...fileEntries.filter((e) => e.role === 'operator'),
    ],
    tokens,
  );
  const logLevel = (pick(flags['log-level'], 'logLevel') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) fail(`log level must be one of ${LOG_LEVELS.join(', ')}`);
  const publicUrl = pick(flags['public-url'], 'publicUrl');
  if (publicUrl !== undefined && !/^https?:\/\/[^/]+$/.test(publicUrl))
    fail('public URL must be scheme://host[:port] with no path');
  const bodyLimit = pick(flags['body-limit'], 'bodyLimit');
  const host = pick(flags.host, 'host') ?? DEFAULTS.host;
  const portNumber = port === undefined ? DEFAULTS.port : integer('port', port, PORT_RANGE);
  return {
    host,
    port: portNumber,
    grpcPort: grpcPort === undefined ? undefined : integer('gRPC port', grpcPort, PORT_RANGE),
    dataDir: pick(flags['data-dir'], 'dataDir') ?? DEFAULTS.dataDir,
    db: pick(flags.db, 'db'),
    tokens,
    operatorTokens,
    tls: resolveTls(flags, env),
    bodyLimitBytes: bodyLimit === undefined ? DEFAULTS.bodyLimitBytes : parseSize('body limit', bodyLimit),
    publicUrl,
    logLevel,
    noPersonalData: flags['no-personal-data'] ?? bool(ENV.noPersonalData, env[ENV.noPersonalData]) ?? false,
    pushAllow: resolvePushAllow(flags['push-allow'] ?? env[ENV.pushAllow]?.split(',')),
    identityKey: resolveIdentityKey(flags, env),
    allowedHosts: resolveAllowedHosts(flags['allowed-host'] ?? env[ENV.allowedHosts]?.split(',')),
    connections: resolveConnectionLimits(flags, env),
    acceptDidCallers:
      flags['accept-did-callers'] ?? bool(ENV.acceptDidCallers, env[ENV.acceptDidCallers]) ?? false,
    didPrivateHosts:
      flags['did-private-hosts'] ?? bool(ENV.didPrivateHosts, env[ENV.didPrivateHosts]) ?? false,
    metrics: resolveMetricsConfig(flags, env, { host, port: portNumber }),
    limits: resolveCallerLimits(flags, env),
    shutdown: resolveShutdown(flags, env),
    retention: resolveRetention(flags, env),
  };
}

/**
 * The identity key file (docs/acmp-identity.md "Where keys live"): `--identity-key`, then
 * `A2AC_IDENTITY_KEY`, then `<data dir>/identity/keys.json`.
 */
export function resolveIdentityKey(
  flags: { 'identity-key'?: string; 'data-dir'?: string },
  env: Record<string, string | undefined>,
): string {
  const dataDir = flags['data-dir'] ?? (env[ENV.dataDir] || DEFAULTS.dataDir);
  return flags['identity-key'] ?? (env[ENV.identityKey] || `${dataDir}/identity/keys.json`);
}

function resolveTls(flags: HostFlags, env: Record<string, string | undefined>): TlsConfig {
  // A flag wins over its variable: the TLS mode comes from the flags when any TLS flag is given, and only
  // otherwise from the environment.
  const fromFlags = tlsChoice(
    {
      cert: flags['tls-cert'],
      key: flags['tls-key'],
      selfSigned: flags['tls-self-signed'],
      noTls: flags['no-tls'],
    },
    'flags',
  );
  if (fromFlags) return fromFlags;
  const fromEnv = tlsChoice(
    {
      cert: env[ENV.tlsCert] || undefined,
      key: env[ENV.tlsKey] || undefined,
      selfSigned: bool(ENV.tlsSelfSigned, env[ENV.tlsSelfSigned]),
      noTls: bool(ENV.noTls, env[ENV.noTls]),
    },
    'environment',
  );
  // Secure by default: ACPspec personal data travels only over TLS.
  return fromEnv ?? { mode: 'self-signed' };
}

/** The TLS settings one source (the flags, or the environment) gives; undefined: not given there. */
interface TlsSettings {
  cert: string | undefined;
  key: string | undefined;
  selfSigned: boolean | undefined;
  noTls: boolean | undefined;
}

/** The TLS mode one source chooses, if any. @throws LocalError `CONFIG_INVALID` for a conflicting choice. */
function tlsChoice({ cert, key, selfSigned, noTls }: TlsSettings, source: string): TlsConfig | undefined {
  const chosen = [cert !== undefined || key !== undefined, selfSigned === true, noTls === true].filter(
    Boolean,
  ).length;
  if (chosen > 1) fail(`choose one of --tls-cert/--tls-key, --tls-self-signed and --no-tls (${source})`);
  if ((cert === undefined) !== (key === undefined))
    fail(`--tls-cert and --tls-key must be given together (${source})`);
  if (cert !== undefined && key !== undefined) return { mode: 'files', cert, key };
  if (noTls) return { mode: 'off' };
  if (selfSigned) return { mode: 'self-signed' };
  return undefined;
}

/** Where the data lives, for commands that only touch the database (`migrate`): flag, variable, default. */
export function resolveStorageConfig(
  flags: { db?: string; 'data-dir'?: string },
  env: Record<string, string | undefined>,
): { db: string | undefined; dataDir: string } {
  return {
    db: flags.db ?? (env[ENV.db] || undefined),
    dataDir: flags['data-dir'] ?? (env[ENV.dataDir] || DEFAULTS.dataDir),
  };
}

/** Webhook origins (`https://hooks.example.com`), normalised; anything but an http(s) origin is refused. */
function resolvePushAllow(values: string[] | undefined): string[] {
  return (values ?? [])
    .map((v) => v.trim())
    .filter((v) => v !== '')
    .map((v) => {
      let url: URL;
      try {
        url = new URL(v);
      } catch {
        return fail(`push allow-list entry "${v}" is not a URL origin`);
      }
      if (!/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search !== '') {
        fail(`push allow-list entry "${v}" must be an origin like https://hooks.example.com`);
      }
      return url.origin;
    });
}

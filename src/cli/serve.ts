import { parseArgs } from 'node:util';
import { createJsonLogger } from '../shared/logger.js';
import { LIMIT_ENV } from '../server/caller-limits.js';
import { ENV, resolveHostConfig } from '../server/config.js';
import { DEFAULT_SHUTDOWN } from '../server/shutdown-config.js';
import { startHost } from '../server/host.js';
import { startTracing } from '../server/tracing.js';
import { UsageError, type CliIo } from './io.js';
import { SERVE_CONNECTION_OPTIONS, SERVE_CONNECTION_USAGE } from './serve-connections.js';
import { modulesFromFlags, SERVE_MODULE_OPTIONS, SERVE_MODULE_USAGE } from './serve-modules.js';
import { SERVE_RETENTION_OPTIONS, SERVE_RETENTION_USAGE } from './serve-retention.js';

export const SERVE_USAGE = `Usage: a2a-commerce serve [options]

  --host <addr>          listen address (${ENV.host}, default 127.0.0.1)
  --port <n>             port, 0 for any free one (${ENV.port}, default 8443)
  --grpc-port <n>        also serve A2A over gRPC on this port, 0 for any free one (${ENV.grpcPort}; default
                         off). Same tokens, TLS and body limit as HTTP; health service included
  --data-dir <dir>       data directory: SQLite file, self-signed certificate (${ENV.dataDir}, default .data)
  --db <url>             postgres://… or sqlite:<file> (${ENV.db}, default SQLite under the data dir)
  --token <name=secret>  accepted bearer token, repeatable (${ENV.tokens}, comma-separated); its holder is
                         agent:<name>, or token:<digest of the secret> without a name (docs/host.md).
                         Flags show in 'ps': prefer --tokens-file or the environment for real secrets
  --tokens-file <path>   one name=secret a line, # comments; mode 600 (${ENV.tokensFile}); a line
                         "operator name=secret" is an operator credential of /console
  --operator-token <name=secret>
                         the operator credential of the read-only console at /console, repeatable
                         (${ENV.operatorToken}); never a caller token (docs/console.md). Without one,
                         /console is not served
  --accept-did-callers   also accept callers identified by a JWT signed with their DID key (did:key,
                         did:web); their identity is the DID (${ENV.acceptDidCallers}; docs/host.md)
  --did-private-hosts    resolve callers' did:web also at private and loopback addresses (default: public
                         addresses only; ${ENV.didPrivateHosts})
  --metrics-token <t>    a /metrics scrape must send "Authorization: Bearer <t>" (default: /metrics is open;
                         ${ENV.metricsToken})
  --metrics-port <n>     serve /metrics on this plain-HTTP port instead of the main one, 0 for any free one
                         (${ENV.metricsPort}; default: on the main port)
  --metrics-host <addr>  the metrics port's address (${ENV.metricsHost}, default: --host)
  --no-process-metrics   leave process_* and nodejs_* out of /metrics (${ENV.processMetrics}=false)
  --tls-cert <file>      certificate (PEM) (${ENV.tlsCert})
  --tls-key <file>       private key (PEM) (${ENV.tlsKey})
  --tls-self-signed      self-signed localhost certificate in the data dir (${ENV.tlsSelfSigned}; the default)
  --no-tls               plain HTTP (${ENV.noTls}); ACPspec then needs --no-personal-data
  --no-personal-data     declare this host handles no personal data (${ENV.noPersonalData})
  --public-url <url>     base URL for the card behind a proxy (${ENV.publicUrl})
  --push-allow <origin>  offer push notifications to webhooks at this origin, repeatable (${ENV.pushAllow})
  --identity-key <file>  Layer 7 identity keys (${ENV.identityKey}, default <data dir>/identity/keys.json);
                         with a key the host has a did:web (a2a-commerce keys new; docs/acmp-identity.md)
  --body-limit <size>    request body limit, e.g. 1m (${ENV.bodyLimit}, default 1m)
  --max-open-sessions <n>  open ACMP negotiation sessions per caller, all tenants (${LIMIT_ENV.maxOpenSessions}, default 8)
  --max-running-tasks <n>  running ACMP tasks per caller, all tenants; 0 = no cap (${LIMIT_ENV.maxRunningTasks}, default 32)
  --rate-limit <n>       requests per caller (anonymous: per address) per window, every binding; 0 = off
                         (${LIMIT_ENV.rateLimit}, default 600)
  --rate-window <s>      the rate's window in seconds (${LIMIT_ENV.rateWindow}, default 60)
  --log-level <level>    debug|info|warn|error|silent (${ENV.logLevel}, default info)
  --migrate              apply PostgreSQL migrations on start (SQLite always migrates itself)
  --drain-delay-ms <n>   on SIGTERM, answer /readyz 503 (gRPC health NOT_SERVING) this long before new
                         work is refused (${ENV.drainDelayMs}, default ${DEFAULT_SHUTDOWN.drainDelayMs}; Kubernetes: 5000)
  --shutdown-grace-ms <n>  then let running tasks finish this long before closing (${ENV.graceMs}, default ${DEFAULT_SHUTDOWN.graceMs})
${SERVE_CONNECTION_USAGE}
${SERVE_RETENTION_USAGE}
${SERVE_MODULE_USAGE}`;

const SERVE_OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'grpc-port': { type: 'string' },
  'data-dir': { type: 'string' },
  db: { type: 'string' },
  token: { type: 'string', multiple: true },
  'tokens-file': { type: 'string' },
  'operator-token': { type: 'string', multiple: true },
  'accept-did-callers': { type: 'boolean' },
  'did-private-hosts': { type: 'boolean' },
  'metrics-token': { type: 'string' },
  'metrics-port': { type: 'string' },
  'metrics-host': { type: 'string' },
  'no-process-metrics': { type: 'boolean' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'tls-self-signed': { type: 'boolean' },
  'no-tls': { type: 'boolean' },
  'no-personal-data': { type: 'boolean' },
  'public-url': { type: 'string' },
  'push-allow': { type: 'string', multiple: true },
  'identity-key': { type: 'string' },
  'body-limit': { type: 'string' },
  'max-open-sessions': { type: 'string' },
  'max-running-tasks': { type: 'string' },
  'rate-limit': { type: 'string' },
  'rate-window': { type: 'string' },
  'log-level': { type: 'string' },
  migrate: { type: 'boolean' },
  'drain-delay-ms': { type: 'string' },
  'shutdown-grace-ms': { type: 'string' },
  ...SERVE_CONNECTION_OPTIONS,
  ...SERVE_RETENTION_OPTIONS,
  ...SERVE_MODULE_OPTIONS,
} as const;

/**
 * `a2a-commerce serve`: runs the host until SIGINT/SIGTERM, then drains it (not-ready, the drain delay,
 * running tasks finish within the grace) and closes it; exits 0 (docs/operations.md "Health, readiness and
 * shutdown").
 */
export async function serve(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: SERVE_OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const { migrate, modules, escrow, ...rest } = values;
  const {
    'escrow-window-ms': windowMs,
    'escrow-dispute-deadline-ms': deadlineMs,
    'escrow-dispute-default': disputeDefault,
    'escrow-agent': agent,
    'escrow-payee': payee,
    'escrow-ca': ca,
    'escrow-claim-delay-ms': claimDelay,
    'escrow-payout': payout,
    ...flags
  } = rest;
  const moduleFlags = {
    'escrow-window-ms': windowMs,
    'escrow-dispute-deadline-ms': deadlineMs,
    'escrow-dispute-default': disputeDefault,
    'escrow-agent': agent,
    'escrow-payee': payee,
    'escrow-ca': ca,
    'escrow-claim-delay-ms': claimDelay,
    'escrow-payout': payout,
  };
  const config = resolveHostConfig(flags, io.env);
  const logger = createJsonLogger({ level: config.logLevel, write: (line) => io.err(line) });
  const selected = modulesFromFlags({ ...moduleFlags, modules, escrow }, config, io.env);
  // Before the host, so its first request is traced already (docs/operations.md "Tracing").
  const tracing = startTracing(io.env, logger);
  const host = await startHost(config, { modules: selected, logger, migrate });
  io.out(`a2a-commerce listening on ${host.url} (card: ${host.url}/.well-known/agent-card.json)`);
  if (host.grpcUrl) io.out(`a2a-commerce serving gRPC on ${host.grpcUrl}${host.tls ? ' (TLS)' : ''}`);
  if (host.metricsUrl) io.out(`a2a-commerce serving metrics on ${host.metricsUrl}`);
  if (config.tls.mode === 'self-signed') {
    io.out(
      `  self-signed certificate: clients trust it with --data-dir ${config.dataDir}, e.g. a2a-commerce card ${host.url} --data-dir ${config.dataDir}`,
    );
  }
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  logger.info('host.stopping');
  await host.drain();
  await host.close();
  await tracing.shutdown();
  logger.info('host.stopped');
  return 0;
}

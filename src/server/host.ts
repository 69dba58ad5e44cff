import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { AgentExecutor } from '../a2a/binding.js';
import { startGrpcFront, type GrpcFront } from '../a2a/grpc-front.js';
import { createSdkStores, migrateSdkStores, SDK_OWNER_COLUMNS } from '../a2a/sdk-stores.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { LocalError } from '../shared/errors.js';
import { systemIds, type IdSource } from '../shared/ids.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { openDatabase, type Database } from '../storage/database.js';
import { migrateSets, type MigrationSet } from '../storage/migrations.js';
import { ownerIdentityMigration, type OwnerColumn } from '../storage/owner-columns.js';
import type { HostConfig } from './config.js';
import { createApp, type AgentIdentity } from './create-app.js';
import type { HostModule, ModuleParts } from './module.js';
import { ensureSelfSignedCertificate, readTlsFiles, type TlsMaterial } from './tls.js';

/** A running host. */
export interface RunningHost {
  /** Base URL, e.g. `https://127.0.0.1:41234`. */
  readonly url: string;
  /** The gRPC interface's `host:port` (what the card lists and gRPC clients dial); undefined without gRPC. */
  readonly grpcUrl: string | undefined;
  readonly database: Database | undefined;
  readonly tls: TlsMaterial | undefined;
  close(): Promise<void>;
}

export interface StartHostOptions {
  modules?: readonly HostModule[];
  executor?: AgentExecutor;
  identity?: AgentIdentity;
  logger?: Logger;
  ids?: IdSource;
  clock?: Clock;
  /** Apply migrations on start also for PostgreSQL (SQLite always migrates itself). */
  migrate?: boolean;
  /** How long gRPC calls in flight may run on after close() before they are cancelled (default 5 s). */
  grpcGraceMs?: number;
}

const DEFAULT_GRPC_GRACE_MS = 5000;

/**
 * Opens the store, migrates (SQLite always; PostgreSQL when asked — operators run `migrate` otherwise),
 * starts each module, builds the app and listens. Everything opened is closed again if a step fails.
 */
export async function startHost(config: HostConfig, options: StartHostOptions = {}): Promise<RunningHost> {
  const logger = options.logger ?? silentLogger;
  const modules = options.modules ?? [];
  // Secure means the interface clients are told to use is TLS: a plain-http public URL is not, whatever
  // the socket does.
  const secure = config.tls.mode !== 'off' && !(config.publicUrl?.startsWith('http://') ?? false);
  for (const m of modules) m.check?.({ secure, noPersonalData: config.noPersonalData });
  const tls = await loadTls(config);
  const database =
    config.db === 'memory'
      ? undefined
      : openDatabase({
          url: config.db,
          dataDir: config.dataDir,
          onIdleError: (error) => logger.warn('db.idle_connection_lost', errorFields(error)),
        });
  const started: ModuleParts[] = [];
  const stopping = new AbortController();
  let server: Server | undefined;
  let grpc: GrpcFront | undefined;
  const grace = options.grpcGraceMs ?? DEFAULT_GRPC_GRACE_MS;
  try {
    if (database && (database.dialect === 'sqlite' || options.migrate)) await migrateAll(database, modules);
    let baseUrl = config.publicUrl ?? '';
    let grpcUrl: string | undefined;
    const context = {
      database,
      logger,
      ids: options.ids ?? systemIds,
      clock: options.clock ?? systemClock,
      secure,
      baseUrl: () => baseUrl,
      stopping: stopping.signal,
    };
    for (const m of modules) started.push(await m.start(context));
    const { app, handler } = createApp({
      baseUrl: () => baseUrl,
      grpcUrl: () => grpcUrl,
      tokens: config.tokens,
      bodyLimitBytes: config.bodyLimitBytes,
      pushAllow: config.pushAllow,
      stores: createSdkStores(database?.db),
      parts: started,
      executor: options.executor,
      identity: options.identity,
      logger,
    });
    server = tls ? createHttpsServer({ cert: tls.cert, key: tls.key }, app) : createHttpServer(app);
    const listening = server;
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(config.port, config.host, () => resolve());
    });
    const { port } = listening.address() as AddressInfo;
    const hostPart = config.host.includes(':') ? `[${config.host}]` : config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
    baseUrl = config.publicUrl ?? `${tls ? 'https' : 'http'}://${hostPart}:${port}`;
    if (config.grpcPort !== undefined) {
      // The same handler, tokens, body limit and certificate as the HTTP interfaces.
      const front = await startGrpcFront(
        { host: config.host, port: config.grpcPort },
        { handler, tokens: config.tokens, maxMessageBytes: config.bodyLimitBytes, tls, logger },
      );
      grpc = front;
      grpcUrl = `${config.publicUrl ? new URL(config.publicUrl).hostname : hostPart}:${front.port}`;
    }
    logger.info('host.listening', { url: baseUrl, grpc: grpcUrl, store: database?.dialect ?? 'memory', tls: tls !== undefined });
    const front = grpc;
    return { url: baseUrl, grpcUrl, database, tls, close: () => shutdown(listening, front, grace, started, database, stopping) };
  } catch (error) {
    await shutdown(server, grpc, grace, started, database, stopping);
    throw error;
  }
}

/**
 * Our migrations of the SDK's tables (the SDK migrates their schema; the owners in them are ours): owners
 * become identities, `token-<n>` → `legacy:token-<n>` and the SDK's anonymous fallback `unknown` →
 * `anonymous` (src/shared/identity.ts).
 */
export const sdkOwnerMigrations: MigrationSet = {
  id: 'sdk_owners',
  migrations: { '0001_owner_identities': ownerIdentityMigration(SDK_OWNER_COLUMNS, ['unknown']) },
};

/** Applies the SDK's store migrations, ours of its tables, and every module's own. */
export async function migrateAll(database: Database, modules: readonly HostModule[]): Promise<string[]> {
  await migrateSdkStores(database.url);
  return migrateSets(database, [sdkOwnerMigrations, ...modules.flatMap((m) => m.migrations ?? [])]);
}

/** Every column that records a caller identity: the SDK's tables and each module's. */
export function ownerColumnsOf(modules: readonly HostModule[]): OwnerColumn[] {
  return [...SDK_OWNER_COLUMNS, ...modules.flatMap((m) => m.ownerColumns ?? [])];
}

async function loadTls(config: HostConfig): Promise<TlsMaterial | undefined> {
  switch (config.tls.mode) {
    case 'off':
      return undefined;
    case 'files':
      try {
        return readTlsFiles(config.tls.cert, config.tls.key);
      } catch (cause) {
        throw new LocalError('CONFIG_INVALID', 'cannot read the TLS certificate or key file', { cause });
      }
    case 'self-signed':
      return ensureSelfSignedCertificate(config.dataDir);
  }
}

async function shutdown(
  server: Server | undefined,
  grpc: GrpcFront | undefined,
  graceMs: number,
  parts: readonly ModuleParts[],
  database: Database | undefined,
  stopping: AbortController,
): Promise<void> {
  // Modules learn the host is stopping (connections closed now detach instead of cancelling).
  stopping.abort();
  // gRPC first: health turns NOT_SERVING and calls in flight get their grace while the bindings still run.
  const grpcClosed = grpc?.close(graceMs);
  if (server?.listening) {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }
  await grpcClosed;
  try {
    for (const part of [...parts].reverse()) {
      // One part failing to close must not keep the others, or the database, open.
      await part.close?.().catch(() => undefined);
    }
  } finally {
    await database?.close();
  }
}

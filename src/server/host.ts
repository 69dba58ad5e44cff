import { existsSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import type { AgentExecutor } from '../a2a/binding.js';
import { startGrpcFront, type GrpcFront } from '../a2a/grpc-front.js';
import { createSdkStores, SDK_OWNER_COLUMNS, SDK_STORE_TABLES } from '../a2a/sdk-stores.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { LocalError } from '../shared/errors.js';
import { systemIds, type IdSource } from '../shared/ids.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { pendingMigrations, probeDatabase } from '../storage/database-check.js';
import { openDatabase, resolveDatabaseTarget, type Database } from '../storage/database.js';
import { migrateSets, type MigrationSet } from '../storage/migrations.js';
import { ownerIdentityMigration, type OwnerColumn } from '../storage/owner-columns.js';
import { sdkStoreMigrations } from '../storage/sdk-store-migrations.js';
import type { HostConfig } from './config.js';
import { createApp, type AgentIdentity } from './create-app.js';
import type { HostModule, ModuleParts } from './module.js';
import {
  readTlsFiles,
  selfSignedCertificate,
  selfSignedPaths,
  type SelfSigned,
  type TlsMaterial,
} from './tls.js';

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
 * Checks what it can before it listens, so a host that says "listening" can serve: the modules accept
 * the configuration, the TLS files are a matching PEM pair, the database answers and is migrated to this
 * build (SQLite always migrates itself; PostgreSQL when `migrate` is set — operators run `migrate`
 * otherwise). Then it starts each module, builds the app and listens. If any step fails, everything
 * opened is closed and whatever this start created on disk (data directory, SQLite file, certificate) is
 * removed again.
 * @throws LocalError `CONFIG_INVALID`, `DATABASE_UNAVAILABLE` or `DATABASE_NOT_MIGRATED`, each naming the
 *   file, URL or flag at fault and the fix.
 */
export async function startHost(config: HostConfig, options: StartHostOptions = {}): Promise<RunningHost> {
  const logger = options.logger ?? silentLogger;
  const modules = options.modules ?? [];
  // Secure means the interface clients are told to use is TLS: a plain-http public URL is not, whatever
  // the socket does.
  const secure = config.tls.mode !== 'off' && !(config.publicUrl?.startsWith('http://') ?? false);
  for (const m of modules) m.check?.({ secure, noPersonalData: config.noPersonalData });
  const tls = await loadTls(config);
  // Computed just before anything is created, so the window in which another process could create the
  // same paths (and lose them to this start's cleanup) stays small.
  const created = pathsThisStartMayCreate(config);
  let database: Database | undefined;
  const started: ModuleParts[] = [];
  const stopping = new AbortController();
  let server: Server | undefined;
  let grpc: GrpcFront | undefined;
  const grace = options.grpcGraceMs ?? DEFAULT_GRPC_GRACE_MS;
  try {
    database =
      config.db === 'memory'
        ? undefined
        : openDatabase({
            url: config.db,
            dataDir: config.dataDir,
            onIdleError: (error) => logger.warn('db.idle_connection_lost', errorFields(error)),
          });
    if (database)
      await prepareDatabase(database, modules, database.dialect === 'sqlite' || options.migrate === true);
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
      clock: context.clock,
    });
    server = tls
      ? createHttpsServer({ cert: tls.material.cert, key: tls.material.key }, app)
      : createHttpServer(app);
    const listening = server;
    await listen(listening, config);
    tls?.save();
    const { port } = listening.address() as AddressInfo;
    const hostPart = config.host.includes(':')
      ? `[${config.host}]`
      : config.host === '0.0.0.0'
        ? '127.0.0.1'
        : config.host;
    baseUrl = config.publicUrl ?? `${tls ? 'https' : 'http'}://${hostPart}:${port}`;
    if (config.grpcPort !== undefined) {
      // The same handler, tokens, body limit and certificate as the HTTP interfaces.
      const front = await startGrpcFront(
        { host: config.host, port: config.grpcPort },
        {
          handler,
          tokens: config.tokens,
          maxMessageBytes: config.bodyLimitBytes,
          tls: tls?.material,
          logger,
        },
      );
      grpc = front;
      grpcUrl = `${config.publicUrl ? new URL(config.publicUrl).hostname : hostPart}:${front.port}`;
    }
    logger.info('host.listening', {
      url: baseUrl,
      grpc: grpcUrl,
      store: database?.dialect ?? 'memory',
      tls: tls !== undefined,
    });
    const front = grpc;
    const db = database;
    return {
      url: baseUrl,
      grpcUrl,
      database: db,
      tls: tls?.material,
      close: () => shutdown(listening, front, grace, started, db, stopping),
    };
  } catch (error) {
    await shutdown(server, grpc, grace, started, database, stopping);
    removeQuietly(created);
    throw error;
  }
}

/**
 * Makes sure the database can serve this build: it answers, and every migration is applied — applied
 * now when `migrate` is set, otherwise the host refuses to start with the exact command to run.
 * @throws LocalError `DATABASE_UNAVAILABLE`, `DATABASE_NOT_MIGRATED`, or `CONFIG_INVALID` when a migration fails.
 */
async function prepareDatabase(
  database: Database,
  modules: readonly HostModule[],
  migrate: boolean,
): Promise<void> {
  await probeDatabase(database);
  if (migrate) {
    await migrateAll(database, modules);
    return;
  }
  const pending = await pendingMigrations(database, migrationSetsOf(modules));
  if (pending.length === 0) return;
  const shown = pending.length > 4 ? [...pending.slice(0, 4), `… ${pending.length - 4} more`] : pending;
  throw new LocalError(
    'DATABASE_NOT_MIGRATED',
    `the database ${database.location} is not migrated for this version of a2a-commerce (${pending.length} pending: ${shown.join(', ')}). ` +
      `Run: a2a-commerce migrate --db '${database.location}' — or start once with serve --migrate`,
  );
}

/** Listens on the configured address. @throws LocalError `CONFIG_INVALID` saying why the address cannot be used. */
async function listen(server: Server, config: HostConfig): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (cause) {
    const code = (cause as { code?: unknown }).code;
    const where = `${config.host}:${config.port}`;
    const fix =
      code === 'EADDRINUSE'
        ? `another process listens there: stop it, or choose another --port (--port 0 picks a free one)`
        : code === 'EACCES'
          ? `ports below 1024 need privileges: choose --port 8443 or another above 1023`
          : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
            ? `--host ${config.host} is not an address of this machine: use 127.0.0.1, 0.0.0.0 or one of its addresses`
            : `check --host and --port`;
    throw new LocalError('CONFIG_INVALID', `cannot listen on ${where} (${String(code ?? cause)}): ${fix}`, {
      cause,
    });
  }
}

/** Best effort: the start already failed with the error that matters. */
function removeQuietly(paths: readonly string[]): void {
  for (const path of paths) {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Not ours to report (e.g. a path below a file): the start's own error says what is wrong.
    }
  }
}

/**
 * The paths a start may create that do not exist yet (the topmost missing directory of each, or the
 * SQLite file and its companions), so a failed start can remove exactly what it made.
 */
function pathsThisStartMayCreate(config: HostConfig): string[] {
  const candidates: string[] = [];
  if (config.tls.mode === 'self-signed') candidates.push(dirname(selfSignedPaths(config.dataDir).cert));
  if (config.db !== 'memory') {
    const target = resolveDatabaseTarget(config.db, config.dataDir);
    if (target.dialect === 'sqlite' && target.file !== ':memory:') {
      candidates.push(dirname(target.file));
      if (!existsSync(target.file))
        candidates.push(...['', '-wal', '-shm', '-journal'].map((suffix) => target.file + suffix));
    }
  }
  const created = new Set<string>();
  for (const path of candidates) {
    let top: string | undefined;
    for (let p = resolve(path); !existsSync(p); p = dirname(p)) top = p;
    if (top !== undefined) created.add(top);
  }
  return [...created];
}

/**
 * The SDK stores' tables, created by our migrations as the SDK's own `a2a-db upgrade` creates them and
 * kept in its ledgers (src/storage/sdk-store-migrations.ts; docs/host.md "Migrations").
 */
export const SDK_STORE_MIGRATIONS: readonly MigrationSet[] = sdkStoreMigrations(SDK_STORE_TABLES);

/**
 * Our migrations of the owners in the SDK's tables: owners become identities, `token-<n>` → `legacy:token-<n>` and the SDK's anonymous fallback `unknown` →
 * `anonymous` (src/shared/identity.ts).
 */
export const sdkOwnerMigrations: MigrationSet = {
  id: 'sdk_owners',
  migrations: { '0001_owner_identities': ownerIdentityMigration(SDK_OWNER_COLUMNS, ['unknown']) },
};

/**
 * Applies the SDK stores' migrations, ours of the owners in them, and every module's own.
 * @throws LocalError `DATABASE_UNAVAILABLE` when the database cannot be reached, `CONFIG_INVALID` naming
 *   the migration that failed and why.
 */
export async function migrateAll(database: Database, modules: readonly HostModule[]): Promise<string[]> {
  await probeDatabase(database);
  return migrateSets(database, migrationSetsOf(modules));
}

/** The migration sets, in order: the SDK stores' tables, the owners in them, then every module's. */
function migrationSetsOf(modules: readonly HostModule[]): MigrationSet[] {
  return [...SDK_STORE_MIGRATIONS, sdkOwnerMigrations, ...modules.flatMap((m) => m.migrations ?? [])];
}

/** Every column that records a caller identity: the SDK's tables and each module's. */
export function ownerColumnsOf(modules: readonly HostModule[]): OwnerColumn[] {
  return [...SDK_OWNER_COLUMNS, ...modules.flatMap((m) => m.ownerColumns ?? [])];
}

/** The TLS material, checked; a new self-signed pair is saved only once the host listens. */
async function loadTls(config: HostConfig): Promise<SelfSigned | undefined> {
  switch (config.tls.mode) {
    case 'off':
      return undefined;
    case 'files': {
      const material = readTlsFiles(config.tls.cert, config.tls.key);
      return { material, save: () => undefined };
    }
    case 'self-signed':
      return selfSignedCertificate(config.dataDir);
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

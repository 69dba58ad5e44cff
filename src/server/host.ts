import { createHostMetrics, type HostMetrics } from './metrics.js';
import { listenMetrics, type MetricsListener } from './metrics-listener.js';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { AgentExecutor } from '../a2a/binding.js';
import { didCallerAudiences, type DidCallerPolicy } from '../a2a/host/caller-auth.js';
import { startGrpcFront, type GrpcFront } from '../a2a/host/grpc-front.js';
import type { CommerceRequestHandler } from '../a2a/host/request-handler.js';
import { createSdkStores } from '../a2a/host/sdk-stores.js';
import {
  createDidResolver,
  createMemoryReplayCache,
  type DidResolver,
  type Signer,
} from '../acmp/identity/index.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { systemIds, type IdSource } from '../shared/ids.js';
import { createRequestLimiter, type RequestLimiter } from '../shared/request-rate.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { openDatabase, type Database } from '../storage/sql/database.js';
import { KyselyReplayCache } from '../storage/acmp/replay-cache-kysely.js';
import { migrationSetsOf, prepareDatabase } from './host-migrations.js';
import { Readiness } from './health.js';
import { closeHttpServer, listen } from './host-server.js';
import { sleep } from '../shared/async.js';
import { startBackgroundPruner, type BackgroundPruner } from './background-pruner.js';
import { createWebIdentity, type WebIdentity } from '../acmp/identity/host-identity.js';
import { openKeyRing } from '../acmp/identity/key-ring.js';
import { capConnections } from '../shared/connection-cap.js';
import { hostAccessOf } from './allowed-hosts.js';
import type { HostConfig } from './config.js';
import { createApp, type AgentIdentity, type App } from './create-app.js';
import { baseUrlOf, grpcAddressOf, isSecureHost } from './host-address.js';
import { httpServerOptions } from './http-limits.js';
import type { HostModule, ModuleContext, ModuleParts } from './module.js';
import { pathsThisStartMayCreate, removeQuietly } from './start-paths.js';
import { loadTls, type SelfSigned, type TlsMaterial } from './tls.js';
import { consoleFor } from './console/console-routes.js';
import { metricsOnApp } from './metrics-config.js';
import { startParts } from './start-parts.js';

/** A running host. */
export interface RunningHost {
  /** Base URL, e.g. `https://127.0.0.1:41234`. */
  readonly url: string;
  /** The gRPC interface's `host:port` (what the card lists and gRPC clients dial); undefined without gRPC. */
  readonly grpcUrl: string | undefined;
  /** The metrics port's scrape URL (`--metrics-port`); undefined when `/metrics` is on the main port. */
  readonly metricsUrl: string | undefined;
  readonly database: Database | undefined;
  readonly tls: TlsMaterial | undefined;
  /**
   * Drains before a stop (docs/operations.md "Health, readiness and shutdown"): turns not-ready at once
   * (`/readyz` 503, gRPC health NOT_SERVING), waits `shutdown.drainDelayMs` so balancers see it, then
   * refuses new ACMP invokes (-33099 `draining`) and waits at most `shutdown.graceMs` for running tasks to
   * finish and their answers to be sent. Everything else is still answered until {@link close}. Calling
   * it again returns the same drain.
   */
  drain(): Promise<void>;
  /** Stops serving and closes everything; after {@link drain} (awaited first when under way) it closes gently. */
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
  /**
   * `none`: the cores report to the no-op metrics and nothing serves `/metrics` (the benchmark's
   * baseline); default `prometheus` (docs/operations.md "Metrics").
   */
  metrics?: 'prometheus' | 'none';
  /** Signs the agent card (A2A §8.4) instead of the host's own key (its identity key file, when it holds one). */
  signer?: Signer;
  /** Resolves the DIDs of callers (with `acceptDidCallers`); default: did:key and did:web over HTTPS. */
  didResolver?: DidResolver;
  /** The lean invoke path (src/a2a/host/lean-invoke.ts); default on. Off only to compare it with the SDK's path. */
  leanInvoke?: boolean;
}

const DEFAULT_GRPC_GRACE_MS = 5000;
/** After a drain: how long connections still open may finish their responses before they are cut. */
const CLOSE_AFTER_DRAIN_MS = 1000;

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
  const secure = isSecureHost(config);
  for (const m of options.modules ?? []) m.check?.({ secure, noPersonalData: config.noPersonalData });
  const tls = await loadTls(config.tls, config.dataDir);
  const host = new Host(config, { ...options, secure, tls });
  await host.start();
  return host;
}

/** What {@link Host} starts with: the caller's options, and what the checks before it established. */
interface HostSetup extends StartHostOptions {
  secure: boolean;
  /** The checked TLS material; a new self-signed pair is saved once the host listens. */
  tls: SelfSigned | undefined;
}

/**
 * A host and what it holds: the database, the started modules' parts, the HTTP(S) server and the gRPC
 * front. Each start step opens one of them; {@link Host.close} closes whatever is open, in reverse.
 */
class Host implements RunningHost {
  url: string;
  grpcUrl: string | undefined;
  metricsUrl: string | undefined;
  database: Database | undefined;
  readonly tls: TlsMaterial | undefined;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly modules: readonly HostModule[];
  private readonly parts: ModuleParts[] = [];
  private readonly stopping = new AbortController();
  /** Aborted by close(): a drain delay still under way ends at once. */
  private readonly closing = new AbortController();
  private server: Server | undefined;
  private grpc: GrpcFront | undefined;
  private identity: WebIdentity | undefined;
  /** One policy (and so one replay cache) for HTTP, gRPC and `/mcp`; set once the database is open. */
  private didCallers: DidCallerPolicy | undefined;
  /** The request rate per caller, shared by HTTP and gRPC (docs/host.md "Limits per caller"). */
  private readonly rate: RequestLimiter | undefined;
  /** This host's metrics, in a registry of its own (docs/operations.md "Metrics"); none when off. */
  private readonly metrics: HostMetrics | undefined;
  private metricsPort: MetricsListener | undefined;
  /** `/readyz` and gRPC health (src/server/health.ts); set once the database is open. */
  private readiness: Readiness | undefined;
  private draining: Promise<void> | undefined;
  /** Retention in the background (docs/operations.md "Retention"); none on memory stores. */
  private pruner: BackgroundPruner | undefined;

  constructor(
    private readonly config: HostConfig,
    private readonly setup: HostSetup,
  ) {
    this.url = config.publicUrl ?? '';
    this.tls = setup.tls?.material;
    this.logger = setup.logger ?? silentLogger;
    this.clock = setup.clock ?? systemClock;
    this.modules = setup.modules ?? [];
    this.rate = config.limits.rate && createRequestLimiter(config.limits.rate);
    this.metrics =
      setup.metrics === 'none' ? undefined : createHostMetrics({ process: config.metrics.process });
  }

  /** Callers identified by DID, when accepted: spent tokens in the database (shared by hosts on it). */
  private didCallerPolicy(): DidCallerPolicy | undefined {
    if (!this.config.acceptDidCallers) return undefined;
    return {
      resolver:
        this.setup.didResolver ??
        createDidResolver({ clock: this.clock, publicOnly: !this.config.didPrivateHosts }),
      replay: this.database
        ? new KyselyReplayCache(this.database, this.clock)
        : createMemoryReplayCache({ clock: this.clock }),
      audiences: () => didCallerAudiences(this.url),
      clock: this.clock,
      logger: this.logger,
    };
  }

  /** Runs the start steps; on a failure closes what they opened and removes what they created on disk. */
  async start(): Promise<void> {
    // Computed just before anything is created, so the window in which another process could create the
    // same paths (and lose them to this start's cleanup) stays small.
    const created = pathsThisStartMayCreate(this.config);
    try {
      await this.openDatabase();
      this.readiness = new Readiness({
        database: this.database,
        migrations: migrationSetsOf(this.modules),
        clock: this.clock,
      });
      this.didCallers = this.didCallerPolicy();
      await this.startModules();
      this.pruner = startBackgroundPruner(this.database, this.config.retention, {
        logger: this.logger,
        clock: this.clock,
      });
      const { listener, serverClasses, handler } = this.createApp();
      await this.listen(listener, serverClasses);
      await this.startGrpc(handler);
      await this.startMetricsPort();
      this.logger.info('host.listening', {
        url: this.url,
        grpc: this.grpcUrl,
        metrics: this.metricsUrl,
        store: this.database?.dialect ?? 'memory',
        tls: this.tls !== undefined,
      });
    } catch (error) {
      await this.close();
      removeQuietly(created);
      throw error;
    }
  }

  /** Opens the configured database (none for `memory`) and makes sure it can serve this build. */
  private async openDatabase(): Promise<void> {
    if (this.config.db === 'memory') return;
    const database = openDatabase({
      url: this.config.db,
      dataDir: this.config.dataDir,
      onIdleError: (error) => this.logger.warn('db.idle_connection_lost', errorFields(error)),
    });
    this.database = database;
    await prepareDatabase(
      database,
      this.modules,
      database.dialect === 'sqlite' || this.setup.migrate === true,
    );
  }

  /** Starts each module in order with the host's context; its parts are closed in reverse by close(). */
  private async startModules(): Promise<void> {
    this.identity = this.openIdentity();
    const context: ModuleContext = {
      database: this.database,
      logger: this.logger,
      ids: this.setup.ids ?? systemIds,
      clock: this.clock,
      secure: this.setup.secure,
      baseUrl: () => this.url,
      stopping: this.stopping.signal,
      ...(this.metrics ? { metrics: this.metrics } : {}),
      ...(this.identity ? { identity: this.identity } : {}),
    };
    await startParts(this.modules, context, this.parts);
  }

  /**
   * The host's did:web identity (Layer 7 §2), when its key file holds a key: its DID follows the public
   * URL, its document lists every key of the file and the modules' aliases.
   * @throws LocalError `CONFIG_INVALID` when the key file is readable by others or not a key file.
   */
  private openIdentity(): WebIdentity | undefined {
    const keys = openKeyRing(this.config.identityKey);
    if (keys.keys().length === 0) return undefined;
    const alsoKnownAs = this.modules.flatMap((m) => m.aliases ?? []);
    return createWebIdentity({ keys, baseUrl: () => this.url, alsoKnownAs });
  }

  /** The Express app over the started parts; base URL and gRPC address are read per request. */
  private createApp(): App {
    const identity = this.identity;
    return createApp({
      baseUrl: () => this.url,
      grpcUrl: () => this.grpcUrl,
      tokens: this.config.tokens,
      didCallers: this.didCallers,
      // The card is signed by the given signer, else by the host's own key (its did:web, Layer 7 §2).
      signer: () => this.setup.signer ?? identity?.signer(),
      bodyLimitBytes: this.config.bodyLimitBytes,
      pushAllow: this.config.pushAllow,
      stores: createSdkStores(this.database?.db),
      parts: this.parts,
      executor: this.setup.executor,
      identity: this.setup.identity,
      ...(identity ? { didDocument: () => identity.document() } : {}),
      logger: this.logger,
      clock: this.clock,
      access: hostAccessOf(this.config),
      rate: this.rate,
      ...(this.metrics && { metrics: metricsOnApp(this.metrics, this.config.metrics) }),
      readiness: this.readiness,
      leanInvoke: this.setup.leanInvoke,
      console: consoleFor(this.config, this.database),
    });
  }

  /** Serves the app over HTTPS (or HTTP with TLS off); saves a new self-signed pair once it listens. */
  private async listen(app: App['listener'], classes: App['serverClasses']): Promise<void> {
    const tls = this.setup.tls;
    const limits = { ...httpServerOptions(this.config.connections), ...classes };
    const server = tls
      ? createHttpsServer({ ...limits, cert: tls.material.cert, key: tls.material.key }, app)
      : createHttpServer(limits, app);
    capConnections(server, this.config.connections.maxConnections, {
      logger: this.logger,
      port: 'http',
      clock: this.clock,
    });
    this.server = server;
    await listen(server, this.config);
    tls?.save();
    const { port } = server.address() as AddressInfo;
    this.url = baseUrlOf(this.config, { tls: tls !== undefined, port });
  }

  /** The gRPC interface, when configured: the same handler, tokens, body limit and certificate as HTTP. */
  private async startGrpc(handler: CommerceRequestHandler): Promise<void> {
    if (this.config.grpcPort === undefined) return;
    const front = await startGrpcFront(
      { host: this.config.host, port: this.config.grpcPort },
      {
        handler,
        tokens: this.config.tokens,
        didCallers: this.didCallers,
        maxMessageBytes: this.config.bodyLimitBytes,
        limits: this.config.connections,
        tls: this.tls,
        logger: this.logger,
        rate: this.rate,
        metrics: this.metrics,
        readiness: this.readiness,
      },
    );
    this.grpc = front;
    this.grpcUrl = grpcAddressOf(this.config, front.port);
  }

  drain(): Promise<void> {
    this.draining ??= this.runDrain();
    return this.draining;
  }

  private async runDrain(): Promise<void> {
    const { drainDelayMs, graceMs } = this.config.shutdown;
    this.logger.info('host.draining', { drainDelayMs, graceMs });
    this.readiness?.startDraining();
    // Without a delay new work is refused from this very call on: a request already on its way is
    // refused too, not admitted because a zero-length timer had not fired yet.
    if (drainDelayMs > 0) await sleep(drainDelayMs, { signal: this.closing.signal }).catch(() => undefined);
    this.logger.info('host.refusing_new_work', { graceMs });
    // One part failing to drain must not keep the others from it.
    await Promise.all(this.parts.map(async (part) => part.drain?.(graceMs).catch(() => undefined)));
    this.logger.info('host.drained');
  }

  /** `/metrics` on a plain-HTTP port of its own, when configured (docs/operations.md "Metrics"). */
  private async startMetricsPort(): Promise<void> {
    if (this.config.metrics.port === undefined || !this.metrics) return;
    this.metricsPort = await listenMetrics(this.config, { metrics: this.metrics, logger: this.logger });
    this.metricsUrl = this.metricsPort.url;
  }

  /** Stops serving, then closes the modules' parts (last started first) and the database. */
  async close(): Promise<void> {
    const drained = this.draining !== undefined;
    this.closing.abort();
    await this.draining;
    // Modules learn the host is stopping (connections closed now detach instead of cancelling).
    this.stopping.abort();
    // gRPC first: health turns NOT_SERVING and calls in flight get their grace while the bindings still run.
    const grpcGraceMs = drained ? CLOSE_AFTER_DRAIN_MS : (this.setup.grpcGraceMs ?? DEFAULT_GRPC_GRACE_MS);
    const grpcClosed = this.grpc?.close(grpcGraceMs);
    // After a drain, responses under way may end (each closes its connection); without one, cut at once.
    if (this.server) await closeHttpServer(this.server, drained ? CLOSE_AFTER_DRAIN_MS : 0);
    await grpcClosed;
    this.readiness?.close();
    await this.pruner?.stop();
    await this.metricsPort?.close();
    try {
      for (const part of [...this.parts].reverse()) {
        // One part failing to close must not keep the others, or the database, open.
        await part.close?.().catch(() => undefined);
      }
    } finally {
      await this.database?.close();
    }
  }
}

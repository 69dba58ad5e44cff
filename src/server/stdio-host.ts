import type { Readable, Writable } from 'node:stream';
import { systemClock, type Clock } from '../shared/clock.js';
import { LocalError } from '../shared/errors.js';
import { ANONYMOUS_IDENTITY, identityOfSecret } from '../shared/identity.js';
import { systemIds, type IdSource } from '../shared/ids.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { openDatabase, type Database } from '../storage/sql/database.js';
import type { HostConfig } from './config.js';
import { migrateAll } from './host-migrations.js';
import type { HostModule, ModuleContext, ModuleParts, StdioSession } from './module.js';
import { startParts } from './start-parts.js';

/** Options of {@link serveStdioHost}. */
export interface StdioHostOptions {
  modules: readonly HostModule[];
  stdin: Readable;
  stdout: Writable;
  /** The bearer token the client's environment presented (Layer 1 §5.1: over stdio, an environment variable). */
  token: string | undefined;
  logger?: Logger;
  ids?: IdSource;
  clock?: Clock;
}

/**
 * The caller of a stdio connection (Layer 1 §5.1): the identity of the token in its environment, checked
 * against the host's tokens like an `Authorization` header, so a task started over stdio is the same
 * caller's over HTTP on a host sharing the database; `anonymous` when the host has no tokens.
 * @throws LocalError `REFUSED` when the host has tokens and none (or a wrong one) was presented.
 */
function stdioCaller(config: Pick<HostConfig, 'tokens'>, token: string | undefined): string {
  if (config.tokens.length === 0) return ANONYMOUS_IDENTITY;
  const identity = token === undefined || token === '' ? undefined : identityOfSecret(config.tokens, token);
  if (identity === undefined)
    throw new LocalError(
      'REFUSED',
      token ? 'A2AC_TOKEN is not an accepted token' : 'this host accepts bearer tokens: set A2AC_TOKEN',
    );
  return identity;
}

/**
 * Serves one MCP stdio connection from the host's modules (`a2a-commerce mcp-stdio`): opens and migrates
 * the store like `startHost` (SQLite always), starts the modules, and hands the streams to the module that
 * serves stdio. Stops the modules and the store when the session closes.
 * @throws LocalError `REFUSED` for a missing or wrong token, `CONFIG_INVALID` when no module serves stdio.
 */
export async function serveStdioHost(config: HostConfig, options: StdioHostOptions): Promise<StdioSession> {
  const caller = stdioCaller(config, options.token);
  return new StdioHost(config, options).serve(caller);
}

/**
 * A host serving one stdio connection and what it holds: the database and the started modules' parts.
 * Each step opens one of them; {@link StdioHost.stop} closes whatever is open, in reverse.
 */
class StdioHost {
  private readonly logger: Logger;
  private readonly stopping = new AbortController();
  private readonly parts: ModuleParts[] = [];
  private database: Database | undefined;

  constructor(
    private readonly config: HostConfig,
    private readonly options: StdioHostOptions,
  ) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Runs the steps and hands the streams to the module serving stdio; on a failure closes what they opened. */
  async serve(caller: string): Promise<StdioSession> {
    this.openDatabase();
    try {
      if (this.database?.dialect === 'sqlite') await migrateAll(this.database, this.options.modules);
      await this.startModules();
      const session = this.serveStdio(caller);
      this.logger.info('host.stdio_serving', { store: this.database?.dialect ?? 'memory' });
      return new HostedStdioSession(session, this);
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Opens the configured database (SQLite by default; none for `memory`). */
  private openDatabase(): void {
    if (this.config.db === 'memory') return;
    this.database = openDatabase({
      url: this.config.db,
      dataDir: this.config.dataDir,
      onIdleError: (error) => this.logger.warn('db.idle_connection_lost', errorFields(error)),
    });
  }

  /** Starts each module in order; a stdio host is never secure and has no base URL. */
  private async startModules(): Promise<void> {
    const context: ModuleContext = {
      database: this.database,
      logger: this.logger,
      ids: this.options.ids ?? systemIds,
      clock: this.options.clock ?? systemClock,
      secure: false,
      baseUrl: () => '',
      stopping: this.stopping.signal,
    };
    await startParts(this.options.modules, context, this.parts);
  }

  /** @throws LocalError `CONFIG_INVALID` when no started module serves stdio. */
  private serveStdio(caller: string): StdioSession {
    const server = this.parts.find((p) => p.serveStdio !== undefined);
    if (!server?.serveStdio) throw new LocalError('CONFIG_INVALID', 'no module serves MCP over stdio');
    return server.serveStdio({ stdin: this.options.stdin, stdout: this.options.stdout, caller });
  }

  /**
   * Tells the modules the host is stopping (so the connection closing now is not a client's cancel), closes
   * the served session if there is one, the parts (last started first), then the database.
   */
  async stop(session?: StdioSession): Promise<void> {
    this.stopping.abort();
    await session?.close();
    try {
      for (const part of [...this.parts].reverse()) await part.close?.().catch(() => undefined);
    } finally {
      await this.database?.close();
    }
  }
}

/** The served connection: closing it closes the module's session, then the host behind it. */
class HostedStdioSession implements StdioSession {
  readonly closed: Promise<void>;

  constructor(
    private readonly session: StdioSession,
    private readonly host: StdioHost,
  ) {
    this.closed = session.closed;
  }

  close(): Promise<void> {
    return this.host.stop(this.session);
  }
}

import type { Readable, Writable } from 'node:stream';
import { systemClock, type Clock } from '../shared/clock.js';
import { LocalError } from '../shared/errors.js';
import { ANONYMOUS_IDENTITY, identityOfSecret } from '../shared/identity.js';
import { systemIds, type IdSource } from '../shared/ids.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { openDatabase } from '../storage/database.js';
import type { HostConfig } from './config.js';
import { migrateAll } from './host.js';
import type { HostModule, ModuleParts, StdioSession } from './module.js';

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
  const logger = options.logger ?? silentLogger;
  const caller = stdioCaller(config, options.token);
  const database =
    config.db === 'memory'
      ? undefined
      : openDatabase({
          url: config.db,
          dataDir: config.dataDir,
          onIdleError: (error) => logger.warn('db.idle_connection_lost', errorFields(error)),
        });
  const stopping = new AbortController();
  const started: ModuleParts[] = [];
  const close = async (): Promise<void> => {
    stopping.abort();
    try {
      for (const part of [...started].reverse()) await part.close?.().catch(() => undefined);
    } finally {
      await database?.close();
    }
  };
  try {
    if (database?.dialect === 'sqlite') await migrateAll(database, options.modules);
    const context = {
      database,
      logger,
      ids: options.ids ?? systemIds,
      clock: options.clock ?? systemClock,
      secure: false,
      baseUrl: () => '',
      stopping: stopping.signal,
    };
    for (const m of options.modules) started.push(await m.start(context));
    const server = started.find((p) => p.serveStdio !== undefined);
    if (!server?.serveStdio) throw new LocalError('CONFIG_INVALID', 'no module serves MCP over stdio');
    const session = server.serveStdio({ stdin: options.stdin, stdout: options.stdout, caller });
    logger.info('host.stdio_serving', { store: database?.dialect ?? 'memory' });
    return {
      closed: session.closed,
      close: async () => {
        stopping.abort();
        await session.close();
        await close();
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

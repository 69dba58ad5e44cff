import express from 'express';
import type { TransactionStore } from '../../acpspec/transaction-store.js';
import type { BearerToken } from '../../shared/identity.js';
import type { Logger } from '../../shared/logger.js';
import type { Clock } from '../../shared/clock.js';
import type { Database } from '../../storage/sql/database.js';
import { createKyselyTransactionStore } from '../../storage/acpspec/acp-transaction-store-kysely.js';
import { ChangeFeed } from './change-feed.js';
import { consoleAssetsDir, consoleStatic } from './console-assets.js';
import { consoleReadApi } from './read-api.js';
import { operatorAuth } from './operator-auth.js';
import { ConsoleTables } from './tables.js';

/** The console's base path (docs/console.md). */
const CONSOLE_PATH = '/console';

/** What the console reads and who may read it. */
export interface ConsoleDeps {
  /** The host's database (every host of a cluster shares it); absent on memory stores: nothing to read. */
  readonly database: Database | undefined;
  readonly operators: readonly BearerToken[];
  /** Caller tokens: refused at the console with 403. */
  readonly callers: readonly BearerToken[];
  readonly logger: Logger;
  readonly clock: Clock;
  /** How often the live feed reads the database (default 1 s). */
  readonly feedEveryMs?: number;
  /** Where the built pages are (default: this package's `dist/console`). */
  readonly assetsDir?: string | undefined;
}

/** The console's parts for a host: served only when an operator credential is configured. */
export function consoleFor(
  config: { readonly operatorTokens: readonly BearerToken[]; readonly tokens: readonly BearerToken[] },
  database: Database | undefined,
): Omit<ConsoleDeps, 'logger' | 'clock'> | undefined {
  if (config.operatorTokens.length === 0) return undefined;
  return { database, operators: config.operatorTokens, callers: config.tokens };
}

/** The parts the read API works on. */
export interface ConsoleSources {
  readonly database: Database;
  readonly tables: ConsoleTables;
  readonly transactions: TransactionStore;
  readonly feed: ChangeFeed;
  readonly logger: Logger;
  readonly clock: Clock;
}

/**
 * Mounts the operator console: the pages at `/console/` (public static files without data) and the
 * read-only JSON API at `/console/api/…` behind the operator credential. There is no write endpoint.
 * Returns a stop function for the live feed.
 */
export function mountConsole(app: express.Express, deps: ConsoleDeps): () => void {
  const router = express.Router();
  const api = express.Router();
  api.use(operatorAuth(deps.operators, deps.callers));
  api.use((_req, res, next) => {
    res.set('cache-control', 'no-store');
    next();
  });
  let feed: ChangeFeed | undefined;
  if (deps.database) {
    const tables = new ConsoleTables(deps.database);
    feed = new ChangeFeed(
      { database: deps.database, tables, logger: deps.logger, now: () => deps.clock.now() },
      deps.feedEveryMs ?? 1000,
    );
    const sources: ConsoleSources = {
      database: deps.database,
      tables,
      transactions: createKyselyTransactionStore(deps.database),
      feed,
      logger: deps.logger,
      clock: deps.clock,
    };
    api.use(consoleReadApi(sources));
  } else {
    api.use((_req, res) => {
      res.status(409).json({
        error: {
          code: 409,
          status: 'FAILED_PRECONDITION',
          message: 'This host runs on memory stores: the console reads a database (--db)',
        },
      });
    });
  }
  router.use('/api', api);
  router.use(consoleStatic('assetsDir' in deps ? deps.assetsDir : consoleAssetsDir()));
  app.use((req, res, next) => (req.path === CONSOLE_PATH ? res.redirect(301, `${CONSOLE_PATH}/`) : next()));
  app.use(CONSOLE_PATH, router);
  return () => feed?.stop();
}

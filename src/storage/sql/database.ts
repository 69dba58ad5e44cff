import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import { errorCode, LocalError } from '../../shared/errors.js';
import { ListenConnections } from './listen-connections.js';
import { startCheckpointer, type Checkpointer } from './sqlite-checkpointer.js';
import type { SqlKysely, SqlTables } from './query.js';

/** The SQL dialects we run on. */
export type SqlDialect = 'sqlite' | 'postgres';

/** The OpenTelemetry `db.system.name` of a dialect (store commit spans, docs/operations.md "Tracing"). */
export function dbSystemOf(dialect: SqlDialect): string {
  return dialect === 'postgres' ? 'postgresql' : 'sqlite';
}

/**
 * An open database: one Kysely instance shared by every store (the SDK's task and push-notification
 * stores and each binding's own tables).
 */
export interface Database {
  /** Tables are named at run time, so every column reads as `unknown` and is decoded ({@link SqlKysely}). */
  readonly db: SqlKysely;
  readonly dialect: SqlDialect;
  /** The URL the SDK's migrator connects with (`sqlite:<file>` or the `postgres://` URL). */
  readonly url: string;
  /** A printable location with any password removed. */
  readonly location: string;
  /**
   * The raw SQLite handle under `db` (SQLite only). A user MUST hold `db`'s connection while using it
   * (`db.connection().execute(…)`), or its statements could land inside another store's open transaction.
   */
  readonly sqlite?: BetterSqlite3.Database;
  /** The LISTEN connections stores open on it (PostgreSQL only), for the host's readiness. */
  readonly listens?: ListenConnections;
  close(): Promise<void>;
}

/** Where the data lives: a `postgres://` URL, a `sqlite:<file>` URL, or the SQLite default under `dataDir`. */
export interface DatabaseOptions {
  url?: string | undefined;
  dataDir: string;
  /** PostgreSQL pool size (default 10). */
  poolSize?: number;
  /** Told when an idle PostgreSQL connection fails (the pool replaces it) or a background SQLite checkpoint fails; for logging. */
  onIdleError?: (error: Error) => void;
}

/** The SQLite file used when no URL is given. */
function defaultSqlitePath(dataDir: string): string {
  return join(dataDir, 'a2a-commerce.sqlite');
}

/** Where a database URL points: PostgreSQL, or a SQLite file (`:memory:` for an in-memory one). */
export type DatabaseTarget = { dialect: 'postgres'; url: string } | { dialect: 'sqlite'; file: string };

/**
 * Reads a database URL (`--db`/`A2AC_DB`), or the SQLite default under `dataDir` when there is none.
 * @throws LocalError `CONFIG_INVALID` naming the URL and what to write instead: no scheme, an unknown
 *   scheme, a `postgres://` URL without a database name, a `sqlite:` URL without a file.
 */
export function resolveDatabaseTarget(url: string | undefined, dataDir: string): DatabaseTarget {
  if (url === undefined) return { dialect: 'sqlite', file: defaultSqlitePath(dataDir) };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    throw new LocalError(
      'CONFIG_INVALID',
      `--db "${url}" has no scheme: write sqlite:${url} for a SQLite file, or postgres://user@host:5432/dbname`,
    );
  }
  if (scheme === 'postgres' || scheme === 'postgresql') {
    let name = '';
    try {
      name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
    } catch {
      // An unparsable URL names no database either.
    }
    if (name === '') {
      throw new LocalError(
        'CONFIG_INVALID',
        `--db "${redactUrl(url)}" names no database: write postgres://user@host:5432/dbname`,
      );
    }
    return { dialect: 'postgres', url };
  }
  if (scheme === 'sqlite') {
    const file = url.slice(url.indexOf(':') + 1).replace(/^\/\//, '');
    if (file === '')
      throw new LocalError(
        'CONFIG_INVALID',
        `--db "${url}" names no file: write sqlite:<file>, e.g. sqlite:.data/agent.sqlite`,
      );
    return { dialect: 'sqlite', file };
  }
  throw new LocalError(
    'CONFIG_INVALID',
    `--db "${redactUrl(url)}": unsupported scheme "${scheme}:" (use postgres://user@host/dbname or sqlite:<file>)`,
  );
}

/**
 * Opens the database. SQLite runs in WAL mode with `synchronous=NORMAL` (durable across process
 * crashes; the last commits may be lost only on power loss) and a busy timeout so a second process
 * waits instead of failing. A SQLite file and the directories it needs are created private (file 0600,
 * directories 0700): they hold callers' data. PostgreSQL connects lazily: see `probeDatabase`.
 * @throws LocalError `CONFIG_INVALID` for a URL {@link resolveDatabaseTarget} refuses, or a SQLite file
 *   that cannot be created or opened (the message names the file and the cause).
 */
export function openDatabase(options: DatabaseOptions): Database {
  const target = resolveDatabaseTarget(options.url, options.dataDir);
  if (target.dialect === 'postgres') {
    const url = target.url;
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 10_000,
    });
    // An idle pooled connection that the server drops (restart, failover, admin termination) is emitted as
    // a pool 'error'; unheard, it would crash the process. The pool discards that client and the next
    // query opens a new one, so the event is only reported.
    pool.on('error', (error) => options.onIdleError?.(error));
    // While a client is checked out (a query or a transaction in flight), pg-pool takes that listener off
    // it, so a connection the server drops then emits an 'error' nobody hears: an uncaught exception that
    // ended the process. The statement in flight already fails with the cause and the pool discards the
    // client when it is released, so this listener only keeps the process alive.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<SqlTables>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      dialect: 'postgres',
      url,
      location: redactUrl(url),
      listens: new ListenConnections(),
      close: () => db.destroy(),
    };
  }
  const file = target.file;
  const sqlite = openSqlite(file);
  // Checkpoints mostly on a worker thread, not inside commits on the event loop (sqlite-checkpointer.ts).
  const checkpointer =
    file === ':memory:' ? undefined : startBackgroundCheckpoints(sqlite, file, options.onIdleError);
  const db = new Kysely<SqlTables>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return {
    db,
    dialect: 'sqlite',
    url: `sqlite:${file}`,
    location: file,
    sqlite,
    async close() {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

function openSqlite(file: string): BetterSqlite3.Database {
  let sqlite: BetterSqlite3.Database | undefined;
  try {
    if (file !== ':memory:') {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      // Created 0600 before SQLite opens it; SQLite gives its -wal and -shm files the database file's mode.
      closeSync(openSync(file, 'a', 0o600));
    }
    sqlite = new BetterSqlite3(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    return sqlite;
  } catch (cause) {
    sqlite?.close();
    const code = errorCode(cause);
    const message = cause instanceof Error ? cause.message : String(cause);
    const detail = typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
    throw new LocalError(
      'CONFIG_INVALID',
      `cannot open the SQLite database ${file}: ${detail}. Check that ${dirname(file)} is a writable directory and ${file} is a SQLite file, or choose another with --db sqlite:<file> or --data-dir`,
      { cause },
    );
  }
}

/** WAL pages (64 MiB) after which the writer checkpoints by itself (SQLite's default is 1,000). */
const WAL_AUTOCHECKPOINT_PAGES = 16_384;

/**
 * Checkpoints in two parts (sqlite-checkpointer.ts): a worker thread copies the WAL into the database file
 * all the time, and the writer's own automatic checkpoint, every 16,384 pages (64 MiB) instead of 1,000,
 * then finds little left to copy and lets the WAL start over. A commit thus rarely waits for a checkpoint,
 * and the WAL stays bounded even under a writer that never pauses.
 */
function startBackgroundCheckpoints(
  sqlite: BetterSqlite3.Database,
  file: string,
  onError: ((error: Error) => void) | undefined,
): Checkpointer {
  sqlite.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  return startCheckpointer(file, (message) => onError?.(new Error(`SQLite checkpoint failed: ${message}`)));
}

const STATEMENT_CACHE_SIZE = 256;

/**
 * The SQLite handle Kysely sees, with a least-recently-used cache of prepared statements keyed by SQL
 * text: Kysely's SQLite driver prepares every query it runs, and preparing costs more than running our
 * small statements. A statement that is still busy (an open `iterate()` of a streamed query) is never
 * handed out twice; a fresh one is prepared instead. SQLite re-prepares cached statements by itself
 * after a schema change.
 */
function withStatementCache(sqlite: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(sql: string) {
      const cached = cache.get(sql);
      if (cached && !cached.busy) {
        cache.delete(sql);
        cache.set(sql, cached);
        return cached;
      }
      const statement = sqlite.prepare(sql);
      if (!cached) {
        cache.set(sql, statement);
        const oldest = cache.keys().next();
        if (cache.size > STATEMENT_CACHE_SIZE && !oldest.done) cache.delete(oldest.value);
      }
      return statement;
    },
    close() {
      cache.clear();
      sqlite.close();
    },
  };
}

/** Removes the password from a URL for logs and messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

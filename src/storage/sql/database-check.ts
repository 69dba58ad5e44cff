import { Migrator, sql } from 'kysely';
import { z } from 'zod';
import { errorCode, LocalError } from '../../shared/errors.js';
import type { Database } from './database.js';
import { migrationTableOf, type MigrationSet } from './migrations.js';

/** What went wrong reaching a database, in words an operator can act on. */
export interface DatabaseFailure {
  /** The cause, with its code (`database "x" does not exist (3D000)`). */
  readonly cause: string;
  /** What to do about it. */
  readonly fix: string;
}

/** The error a driver, or Node's resolver, wrapped in an AggregateError (a host with several addresses). */
function firstError(error: unknown): unknown {
  return error instanceof AggregateError && error.errors.length > 0 ? firstError(error.errors[0]) : error;
}

/**
 * Explains a failure to connect to or query a database: PostgreSQL SQLSTATEs and Node's socket errors.
 * `where` is the printable location (password removed).
 */
function describeDatabaseFailure(error: unknown, where: string): DatabaseFailure {
  const e = firstError(error);
  const raw = errorCode(e);
  const code = typeof raw === 'string' ? raw : undefined;
  const text = typeof e === 'object' && e !== null && 'message' in e ? e.message : undefined;
  const message = typeof text === 'string' && text !== '' ? text : String(error);
  const cause = code === undefined || message.includes(code) ? message : `${message} (${code})`;
  let url: URL | undefined;
  try {
    url = new URL(where);
  } catch {
    url = undefined;
  }
  const name = url?.pathname.replace(/^\//, '') ?? '';
  const host = url ? `${url.hostname}:${url.port || '5432'}` : where;
  switch (code ?? '') {
    case 'ECONNREFUSED':
      return {
        cause,
        fix: `nothing listens at ${host}: start PostgreSQL there, or fix the host and port in --db`,
      };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { cause, fix: `the host name in --db does not resolve: fix it` };
    case 'ETIMEDOUT':
      return { cause, fix: `${host} does not answer: check the host, port and firewall` };
    case '3D000':
      return {
        cause,
        fix: `create the database (createdb -h ${url?.hostname ?? 'host'} -p ${url?.port || '5432'}${url?.username ? ` -U ${decodeURIComponent(url.username)}` : ''} ${name}), then run a2a-commerce migrate; or fix the database name in --db`,
      };
    case '28P01':
    case '28000':
      return { cause, fix: "fix the user name or password in --db (or the server's pg_hba.conf)" };
    case '42P01':
      return { cause, fix: 'the tables are missing: run a2a-commerce migrate --db <url>' };
    default:
      return { cause, fix: 'check --db and that the database server is running' };
  }
}

/**
 * Checks that the database answers a query: reachable, credentials accepted, the database exists.
 * @throws LocalError `DATABASE_UNAVAILABLE` whose message names the database, the cause and the fix.
 */
export async function probeDatabase(
  database: Database,
  options: { signal?: AbortSignal } = {},
): Promise<void> {
  options.signal?.throwIfAborted();
  try {
    await sql`select 1`.execute(database.db);
  } catch (error) {
    const { cause, fix } = describeDatabaseFailure(error, database.location);
    throw new LocalError(
      'DATABASE_UNAVAILABLE',
      `cannot use the database ${database.location}: ${cause}; ${fix}`,
      { cause: error },
    );
  }
}

/** The migrations of `sets` not yet applied to the database, as `<set>/<name>`, in order. */
export async function pendingMigrations(
  database: Database,
  sets: readonly MigrationSet[],
): Promise<string[]> {
  const pending: string[] = [];
  for (const set of sets) {
    const migrator = new Migrator({
      db: database.db,
      provider: { getMigrations: () => Promise.resolve(set.migrations) },
      migrationTableName: migrationTableOf(set),
    });
    for (const m of await migrator.getMigrations())
      if (m.executedAt === undefined) pending.push(`${set.id}/${m.name}`);
  }
  return pending;
}

/**
 * Whether every migration of `sets` is applied, in one statement over their ledger tables (cheap enough
 * for a readiness check once a second, unlike {@link pendingMigrations}, which introspects the schema).
 * A ledger table that is missing counts as not migrated.
 * @throws whatever the driver throws when the database cannot be reached (callers tell the two apart).
 */
export async function isMigrated(database: Database, sets: readonly MigrationSet[]): Promise<boolean> {
  if (sets.length === 0) return true;
  const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;
  const query = sets
    .map((set, i) => `SELECT ${i} AS set_index, name FROM ${quote(migrationTableOf(set))}`)
    .join(' UNION ALL ');
  let rows: unknown[];
  try {
    rows = (await sql.raw(query).execute(database.db)).rows;
  } catch {
    // A missing ledger table is "not migrated" when the database itself answers (else this throws).
    await sql`select 1`.execute(database.db);
    return false;
  }
  const applied = new Set(rows.map((r) => appliedKey(r)));
  return sets.every((set, i) => Object.keys(set.migrations).every((name) => applied.has(`${i}/${name}`)));
}

const LedgerRow = z.object({ set_index: z.union([z.number(), z.string(), z.bigint()]), name: z.string() });

/** `<set index>/<migration name>` of one ledger row (decoded: the driver's row is untyped). */
function appliedKey(row: unknown): string {
  const parsed = LedgerRow.safeParse(row);
  return parsed.success ? `${String(parsed.data.set_index)}/${parsed.data.name}` : '';
}

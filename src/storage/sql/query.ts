import { CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import { z } from 'zod';
import { LocalError } from '../../shared/errors.js';
import type { SqlDialect } from './database.js';
import { bindParams, compileSql, type CountSql, type RunSql, type Statement } from './sql-text.js';

/**
 * The Kysely instance stores and migrations run on. Tables are named at run time (a set's table names are
 * options), so every table may be named and every column reads as `unknown`: what a query returns is
 * decoded before use — a store's statements by the decoder declared beside each ({@link sqlQuery}).
 */
export type SqlKysely = Kysely<SqlTables>;

/** The tables of {@link SqlKysely}: any table name, every column `unknown`. */
export type SqlTables = Record<string, Record<string, unknown>>;

/**
 * What runs a compiled statement: a Kysely instance, one of its transactions, a held connection, or any
 * connection that answers with rows read as `unknown` until a statement's decoder reads them.
 */
export interface SqlExecutor {
  executeQuery(query: CompiledQuery): Promise<SqlResult>;
}

/** What a statement returned: its rows, undecoded, and for a write the number of rows it changed. */
export type SqlResult = Pick<QueryResult<unknown>, 'rows' | 'numAffectedRows'>;

/**
 * Reads one row a statement returned into its model; throws a `LocalError('INVALID_STATE')` when the row
 * is not what the statement selects (STYLE.md "Boundaries": a database row is decoded at the edge).
 */
export type RowDecoder<R> = (row: unknown) => R;

/** A statement written once with `$n` placeholders ({@link compileSql}), beside the decoder of its rows. */
export interface Query<R> {
  readonly text: string;
  readonly decode: RowDecoder<R>;
}

/** Declares a statement and the decoder of the rows it returns. */
export function sqlQuery<R>(text: string, decode: RowDecoder<R>): Query<R> {
  return { text, decode };
}

/**
 * The decoder of a row whose column `name` is read by `read` (a missing column reads as `undefined`,
 * e.g. an aggregate over no rows on a driver that omits it).
 */
export function column<R>(name: string, read: (value: unknown) => R): RowDecoder<R> {
  return (row) => read(fieldOf(row, name));
}

function fieldOf(row: unknown, name: string): unknown {
  if (row === undefined || row === null) return undefined;
  if (typeof row !== 'object') throw new LocalError('INVALID_STATE', 'a database row is not an object');
  const value: unknown = Reflect.get(row, name);
  return value;
}

function decoded<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new LocalError('INVALID_STATE', `a ${what} column is malformed`);
  return parsed.data;
}

/**
 * The decoder of a row read by `schema` (zod); throws `INVALID_STATE` naming `table` for a row it refuses.
 */
export function rowOf<T>(schema: z.ZodType<T>, table: string): RowDecoder<T> {
  return (row) => {
    const parsed = schema.safeParse(row);
    if (!parsed.success) throw new LocalError('INVALID_STATE', `a ${table} row is malformed`);
    return parsed.data;
  };
}

/**
 * The decoder of a statement that returns no rows (an INSERT, UPDATE or DELETE without `RETURNING`): a row
 * it returns anyway is refused.
 */
export const noRows: RowDecoder<never> = () => {
  throw new LocalError('INVALID_STATE', 'a write statement returned a row');
};

/** The decoder of a row whose value is not read, only counted (a guard's `RETURNING`, a `pg_notify` result). */
export const ignoredRow: RowDecoder<null> = () => null;

/** An integer column: PostgreSQL may return it as text or a bigint, SQLite as a number. */
export const IntColumn = z.union([z.number(), z.bigint(), z.string().regex(/^-?\d+$/)]).transform(Number);

const Text = z.string();
const Count = z.union([z.number(), z.string(), z.bigint(), z.null(), z.undefined()]);

/** A row's column as text (ids, names: non-null `TEXT` columns). */
export function text(value: unknown): string {
  return decoded(Text, value, 'text');
}

/** A count or an integer column: PostgreSQL returns `COUNT(*)` and bigint as text, SQLite as a number. */
export function count(value: unknown): number {
  return Number(decoded(Count, value, 'count') ?? 0);
}

/** Runs statements in one dialect on a connection, decoding every row they return. */
export class SqlRunner {
  constructor(readonly dialect: SqlDialect) {}

  /** The decoded rows of `statement` with its parameters (as written: `$1` is `params[0]`). */
  async rows<R>(db: SqlExecutor, statement: Query<R>, params: readonly unknown[]): Promise<R[]> {
    const { rows } = await db.executeQuery(compileSql(this.dialect, statement.text, params));
    return rows.map((row) => statement.decode(row));
  }

  /** The first decoded row of `statement`, or `undefined` when it returned none. */
  async first<R>(db: SqlExecutor, statement: Query<R>, params: readonly unknown[]): Promise<R | undefined> {
    const { rows } = await db.executeQuery(compileSql(this.dialect, statement.text, params));
    return rows.length === 0 ? undefined : statement.decode(rows[0]);
  }

  /** Runs a statement whose rows are not read (DDL, INSERT, UPDATE, DELETE); the number of rows it changed. */
  async exec(db: SqlExecutor, text: string, params: readonly unknown[]): Promise<number> {
    const { numAffectedRows } = await db.executeQuery(compileSql(this.dialect, text, params));
    return Number(numAffectedRows ?? 0n);
  }
}

/** A {@link SqlRunner} bound to one connection (a store's transaction hands this to its steps). */
export interface BoundSql {
  rows<R>(statement: Query<R>, params: readonly unknown[]): Promise<R[]>;
  first<R>(statement: Query<R>, params: readonly unknown[]): Promise<R | undefined>;
  exec(text: string, params: readonly unknown[]): Promise<number>;
}

/** Binds `runner` to the connection `db`. */
export function bindSql(runner: SqlRunner, db: SqlExecutor): BoundSql {
  return {
    rows: (statement, params) => runner.rows(db, statement, params),
    first: (statement, params) => runner.first(db, statement, params),
    exec: (text, params) => runner.exec(db, text, params),
  };
}

/** A {@link RunSql} on a Kysely instance or transaction: each row decoded by its statement's decoder. */
export function runOn(db: SqlExecutor): RunSql {
  return async <R>(statement: Statement<R>, params: readonly unknown[]) => {
    const query = CompiledQuery.raw(statement.sql, [...bindParams(statement, params)]);
    return (await db.executeQuery(query)).rows.map((row) => statement.decode(row));
  };
}

/** A {@link CountSql} on a Kysely instance or transaction. */
export function countOn(db: SqlExecutor): CountSql {
  return async (statement, params) => {
    const query = CompiledQuery.raw(statement.sql, [...bindParams(statement, params)]);
    return Number((await db.executeQuery(query)).numAffectedRows ?? 0n);
  };
}

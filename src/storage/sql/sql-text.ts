import { CompiledQuery } from 'kysely';
import type { SqlDialect } from './database.js';
import type { RowDecoder } from './query.js';

/**
 * A statement in one dialect's own form: its SQL, and for SQLite which parameter each `?` binds
 * (`order` is undefined for PostgreSQL, whose `$n` name their parameters; `inOrder` says the `?` bind
 * the parameters as given, so they need no reordering).
 */
export interface DialectSql {
  readonly sql: string;
  readonly order: readonly number[] | undefined;
  readonly inOrder: boolean;
}

/**
 * A statement written once with PostgreSQL `$n` placeholders (and optional `::type` casts), in the
 * dialect's form: as it is for PostgreSQL; for SQLite each `$n` becomes `?` bound to `params[n - 1]` in
 * the order the placeholders appear, and casts are dropped. Not cached: a caller keeps what it reuses.
 */
export function dialectSql(dialect: SqlDialect, text: string): DialectSql {
  if (dialect === 'postgres') return { sql: text, order: undefined, inOrder: true };
  const order: number[] = [];
  const sql = text.replace(/\$(\d+)(::\w+)?/g, (_match, index: string) => {
    order.push(Number(index) - 1);
    return '?';
  });
  return { sql, order, inOrder: order.every((n, i) => n === i) };
}

/** The parameters in the order the statement's placeholders bind them (`params` itself when that is its order). */
export function bindParams(statement: DialectSql, params: readonly unknown[]): readonly unknown[] {
  const order = statement.order;
  if (order === undefined || (statement.inOrder && order.length === params.length)) return params;
  return order.map((i) => params[i]);
}

const sqliteForms = new Map<string, DialectSql>();

/**
 * A statement written once with `$n` placeholders ({@link dialectSql}), compiled for the dialect with its
 * parameters (SQLite rewrites are cached by statement text).
 */
export function compileSql(dialect: SqlDialect, text: string, params: readonly unknown[]): CompiledQuery {
  if (dialect === 'postgres') return CompiledQuery.raw(text, [...params]);
  let form = sqliteForms.get(text);
  if (!form) {
    form = dialectSql('sqlite', text);
    if (sqliteForms.size < 1_000) sqliteForms.set(text, form);
  }
  return CompiledQuery.raw(form.sql, [...bindParams(form, params)]);
}

/**
 * A statement in its dialect's form beside the decoder of the rows it returns (STYLE.md "One floor down": a
 * statement and its row decoder are declared together); every runner decodes each row with it.
 */
export interface Statement<R> extends DialectSql {
  readonly decode: RowDecoder<R>;
}

/** A statement written once with `$n` placeholders, in the dialect's form ({@link dialectSql}), with its row decoder. */
export function dialectStatement<R>(dialect: SqlDialect, text: string, decode: RowDecoder<R>): Statement<R> {
  return { ...dialectSql(dialect, text), decode };
}

/** Runs a statement with its parameters (as written: `$1` is `params[0]`) on a connection; its decoded rows. */
export type RunSql = <R>(statement: Statement<R>, params: readonly unknown[]) => Promise<R[]>;

/** Runs a statement that returns no rows (an INSERT, UPDATE or DELETE); the number of rows it changed. */
export type CountSql = (statement: DialectSql, params: readonly unknown[]) => Promise<number>;

/** A subquery of the strings of a JSON array parameter `$n` (a batch of ids bound as one value). */
export function jsonStrings(dialect: SqlDialect, n: number): string {
  return dialect === 'postgres'
    ? `SELECT json_array_elements_text($${n}::json)`
    : `SELECT value FROM json_each($${n})`;
}

/** A subquery of `(tenant, owner, id)` rows of a JSON array parameter `$n` of such objects. */
export function jsonKeys(dialect: SqlDialect, n: number): string {
  return dialect === 'postgres'
    ? `SELECT k.tenant, k.owner, k.id FROM json_to_recordset($${n}::json) AS k(tenant text, owner text, id text)`
    : `SELECT json_extract(value, '$.tenant'), json_extract(value, '$.owner'), json_extract(value, '$.id') FROM json_each($${n})`;
}

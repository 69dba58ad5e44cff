import { CompiledQuery } from 'kysely';
import type { SqlDialect } from './database.js';

const sqliteForms = new Map<string, { sql: string; order: number[] }>();

/**
 * A statement written once with PostgreSQL `$n` placeholders (and optional `::type` casts), compiled for
 * the dialect: as it is for PostgreSQL; for SQLite each `$n` becomes `?` bound to `params[n - 1]` in the
 * order the placeholders appear (rewrites are cached by statement text).
 */
export function compileSql(dialect: SqlDialect, text: string, params: readonly unknown[]): CompiledQuery {
  if (dialect === 'postgres') return CompiledQuery.raw(text, [...params]);
  let form = sqliteForms.get(text);
  if (!form) {
    const order: number[] = [];
    const sql = text.replace(/\$(\d+)(::\w+)?/g, (_match, index: string) => {
      order.push(Number(index) - 1);
      return '?';
    });
    form = { sql, order };
    if (sqliteForms.size < 1_000) sqliteForms.set(text, form);
  }
  return CompiledQuery.raw(
    form.sql,
    form.order.map((i) => params[i]),
  );
}

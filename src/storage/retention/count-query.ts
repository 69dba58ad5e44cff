import { column, count, sqlQuery, type BoundSql, type Query } from '../sql/query.js';

/** A `SELECT COUNT(*) AS n` over `from` (its FROM and WHERE clauses), its row decoded as the count. */
export function countQuery(from: string): Query<number> {
  return sqlQuery(`SELECT COUNT(*) AS n ${from}`, column('n', count));
}

/** The count a {@link countQuery} returns with its parameters (0 when the driver returned no row). */
export async function counted(
  sql: BoundSql,
  query: Query<number>,
  params: readonly unknown[],
): Promise<number> {
  return (await sql.first(query, params)) ?? 0;
}

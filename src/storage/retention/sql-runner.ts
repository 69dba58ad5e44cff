import type { Database, SqlDialect } from '../sql/database.js';
import { compileSql } from '../sql/sql-text.js';
import { column, count } from '../sql/query.js';

/** One statement runner over the shared database, statements written with `$n` placeholders. */
export class SqlRunner {
  readonly dialect: SqlDialect;
  private readonly db: Database['db'];

  constructor(database: Pick<Database, 'db' | 'dialect'>) {
    this.db = database.db;
    this.dialect = database.dialect;
  }

  /** The rows a statement returns (decoded by the caller). */
  async rows(text: string, params: readonly unknown[]): Promise<unknown[]> {
    return (await this.db.executeQuery(compileSql(this.dialect, text, params))).rows;
  }

  /** The number of rows a DELETE or UPDATE changed. */
  async changed(text: string, params: readonly unknown[]): Promise<number> {
    const result = await this.db.executeQuery(compileSql(this.dialect, text, params));
    return Number(result.numAffectedRows ?? 0n);
  }

  /** The `n` of a `SELECT COUNT(*) AS n …`. */
  async count(text: string, params: readonly unknown[]): Promise<number> {
    const [row] = await this.rows(text, params);
    return row === undefined ? 0 : column('n', count)(row);
  }

  /** A subquery of the strings of a JSON array parameter `$n` (a batch of ids bound as one value). */
  jsonStrings(n: number): string {
    return this.dialect === 'postgres'
      ? `SELECT json_array_elements_text($${n}::json)`
      : `SELECT value FROM json_each($${n})`;
  }

  /** A subquery of `(tenant, owner, id)` rows of a JSON array parameter `$n` of such objects. */
  jsonKeys(n: number): string {
    return this.dialect === 'postgres'
      ? `SELECT k.tenant, k.owner, k.id FROM json_to_recordset($${n}::json) AS k(tenant text, owner text, id text)`
      : `SELECT json_extract(value, '$.tenant'), json_extract(value, '$.owner'), json_extract(value, '$.id') FROM json_each($${n})`;
  }
}

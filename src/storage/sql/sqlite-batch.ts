import type BetterSqlite3 from 'better-sqlite3';
import { bindParams, type CountSql, type DialectSql, type RunSql, type Statement } from './sql-text.js';
import type { SqlKysely } from './query.js';

/**
 * Runs transactions on the raw better-sqlite3 handle under a Kysely instance, holding the instance's
 * single connection the whole time (Kysely's own mutex), so no other store's statement or open
 * transaction can interleave. Statements (already in SQLite's form) run as cached prepared statements
 * without Kysely's per-query machinery: a group commit's database work is then a few native calls
 * (docs/acpspec-core.md "Ingest path"). `BEGIN IMMEDIATE` takes the write lock at once, so a second process waits on
 * `busy_timeout` instead of failing mid-transaction.
 */
export class SqliteTransactions {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(
    private readonly db: SqlKysely,
    private readonly sqlite: BetterSqlite3.Database,
  ) {}

  /** Runs `body` as one SQLite transaction: committed when it resolves, rolled back when it throws. */
  execute<T>(body: (sql: { run: RunSql; count: CountSql }) => Promise<T>): Promise<T> {
    return this.db.connection().execute(async () => {
      this.prepared('BEGIN IMMEDIATE').run();
      try {
        const result = await body(this.sql);
        this.prepared('COMMIT').run();
        return result;
      } catch (error) {
        if (this.sqlite.inTransaction) this.prepared('ROLLBACK').run();
        throw error;
      }
    });
  }

  private readonly run: RunSql = <R>(statement: Statement<R>, params: readonly unknown[]) => {
    const prepared = this.prepared(statement.sql);
    const bound = bindParams(statement, params);
    if (prepared.reader) return Promise.resolve(prepared.all(...bound).map((row) => statement.decode(row)));
    prepared.run(...bound);
    return Promise.resolve([]);
  };

  private readonly count: CountSql = (statement: DialectSql, params: readonly unknown[]) =>
    Promise.resolve(this.prepared(statement.sql).run(...bindParams(statement, params)).changes);

  private readonly sql = { run: this.run, count: this.count };

  private prepared(text: string): BetterSqlite3.Statement {
    let statement = this.statements.get(text);
    if (statement === undefined) {
      statement = this.sqlite.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }
}

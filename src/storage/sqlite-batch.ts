import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { RunShape } from './acp-batch-write.js';
import type { QueryShapes } from './query-shapes.js';

/**
 * Runs `body` as one SQLite transaction on the raw better-sqlite3 handle under `db`, holding `db`'s single
 * connection for the whole time (Kysely's own mutex), so no other store's statement or open transaction
 * can interleave with it. The statements are the query shapes' own SQL (compiled once by Kysely), run as
 * cached prepared statements without Kysely's per-query machinery: a group commit's database work is then
 * a few native calls (issue 10). `BEGIN IMMEDIATE` takes the write lock at once, so a second process
 * waits on `busy_timeout` instead of failing mid-transaction.
 */
export async function inSqliteTransaction<T>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>,
  sqlite: BetterSqlite3.Database,
  shapes: QueryShapes,
  statements: Map<string, BetterSqlite3.Statement>,
  body: (run: RunShape) => Promise<T>,
): Promise<T> {
  const prepared = (text: string): BetterSqlite3.Statement => {
    let statement = statements.get(text);
    if (statement === undefined) {
      statement = sqlite.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };
  const run: RunShape = <R>(name: string, parameters: readonly unknown[], build: Parameters<RunShape>[2]) => {
    const statement = prepared(shapes.text(name, parameters, build));
    if (statement.reader) return Promise.resolve({ rows: statement.all(...parameters) as R[] });
    statement.run(...parameters);
    return Promise.resolve({ rows: [] as R[] });
  };
  return db.connection().execute(async () => {
    prepared('BEGIN IMMEDIATE').run();
    try {
      const result = await body(run);
      prepared('COMMIT').run();
      return result;
    } catch (error) {
      if (sqlite.inTransaction) prepared('ROLLBACK').run();
      throw error;
    }
  });
}

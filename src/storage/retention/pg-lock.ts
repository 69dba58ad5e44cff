import pg from 'pg';
import { bindSql, column, sqlQuery, SqlRunner, type BoundSql, type SqlExecutor } from '../sql/query.js';

/** The advisory-lock key text every pruner on one PostgreSQL database takes (hashed by the server). */
const PRUNE_LOCK_KEY = 'a2a-commerce.retention.prune';

const LOCK = `SELECT pg_advisory_lock(hashtextextended($1, 0))`;
const UNLOCK = `SELECT pg_advisory_unlock(hashtextextended($1, 0))`;
/** Whether the lock was taken: `true` only when the server said so. */
const TRY_LOCK = sqlQuery(
  `SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked`,
  column('locked', (value) => value === true),
);

/**
 * The one-pruner-at-a-time lock on PostgreSQL: a session-level advisory lock held by a connection of its
 * own (outside the pool, so requests keep every pooled connection) for the length of a pass. No row is
 * locked and no transaction stays open; if the holder dies, its connection closes and the server frees
 * the lock, so another host's next pass takes over.
 */
export class PgPruneLock {
  private constructor(
    private readonly client: pg.Client,
    private readonly sql: BoundSql,
  ) {}

  /**
   * Takes the lock: at once or not at all (`wait` false: `undefined` when another pruner holds it), or
   * waiting until the holder's pass ends (`wait` true).
   */
  static async acquire(url: string, options: { wait: boolean }): Promise<PgPruneLock | undefined> {
    const client = new pg.Client({ connectionString: url });
    // A connection lost while held only ends the lock; the pass's own statements report their failures.
    client.on('error', () => undefined);
    await client.connect();
    const sql = bindSql(new SqlRunner('postgres'), onClient(client));
    try {
      if (options.wait) {
        await sql.exec(LOCK, [PRUNE_LOCK_KEY]);
        return new PgPruneLock(client, sql);
      }
      if ((await sql.first(TRY_LOCK, [PRUNE_LOCK_KEY])) === true) return new PgPruneLock(client, sql);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    await client.end().catch(() => undefined);
    return undefined;
  }

  /** Frees the lock (closing the connection frees it as well). */
  async release(): Promise<void> {
    await this.sql.exec(UNLOCK, [PRUNE_LOCK_KEY]).catch(() => undefined);
    await this.client.end().catch(() => undefined);
  }
}

/** The lock's own connection as an executor of the statements above (their rows; no affected-row count). */
function onClient(client: pg.Client): SqlExecutor {
  return {
    async executeQuery(query) {
      const { rows } = await client.query(query.sql, [...query.parameters]);
      return { rows };
    },
  };
}

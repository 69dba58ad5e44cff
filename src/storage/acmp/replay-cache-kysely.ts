import type { Kysely } from 'kysely';
import type { ReplayCache } from '../../acmp/identity/index.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import type { Database } from '../sql/database.js';
import type { MigrationSet } from '../sql/migrations.js';
import type { SqlKysely, SqlTables } from '../sql/query.js';

/** Spent caller-token ids (docs/acmp-identity.md "Callers identified by DID", "Replay"). */
const TABLE = 'a2ac_spent_caller_tokens';

/** The table of spent caller tokens: one row per `(iss, jti)` until it expires. */
export const callerTokenMigrations: MigrationSet = {
  id: 'caller_tokens',
  migrations: {
    '0001_spent_caller_tokens': {
      async up(db: SqlKysely): Promise<void> {
        await db.schema
          .createTable(TABLE)
          .addColumn('token_key', 'text', (c) => c.primaryKey())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex(`${TABLE}_expires`).on(TABLE).column('expires_at').execute();
      },
    },
  },
};

interface SpentTable {
  token_key: string;
  expires_at: number;
}

/** Expired rows are deleted after this many accepted tokens. */
const PRUNE_EVERY = 1000;

/**
 * A {@link ReplayCache} in the host database: hosts sharing one PostgreSQL (or one SQLite file) spend a
 * token once between them. One statement decides: the insert wins, or the conflicting row was expired
 * and is taken over; a live row makes it a replay. Expired rows are pruned every {@link PRUNE_EVERY}
 * accepted tokens, so the table holds about as many rows as tokens were accepted in five minutes.
 */
export class KyselyReplayCache implements ReplayCache {
  private readonly db: Kysely<SqlTables & { [TABLE]: SpentTable }>;
  private accepted = 0;

  constructor(
    database: Database,
    private readonly clock: Clock = systemClock,
  ) {
    this.db = database.db.withTables<{ [TABLE]: SpentTable }>();
  }

  async remember(key: string, expiresAtMs: number): Promise<boolean> {
    const now = this.clock.now();
    const row = await this.db
      .insertInto(TABLE)
      .values({ token_key: key, expires_at: expiresAtMs })
      .onConflict((oc) =>
        oc
          .column('token_key')
          .doUpdateSet({ expires_at: expiresAtMs })
          .where(`${TABLE}.expires_at`, '<=', now),
      )
      .returning('token_key')
      .executeTakeFirst();
    if (row === undefined) return false;
    if (++this.accepted % PRUNE_EVERY === 0)
      await this.db.deleteFrom(TABLE).where('expires_at', '<=', now).execute();
    return true;
  }
}

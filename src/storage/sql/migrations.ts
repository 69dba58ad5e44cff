import { Migrator } from 'kysely';
import { LocalError } from '../../shared/errors.js';
import type { Database } from './database.js';
import type { SqlKysely } from './query.js';

/** One migration: schema statements on the database (`down` undoes `up` where a set supports it). */
export interface SqlMigration {
  up(db: SqlKysely): Promise<void>;
  down?(db: SqlKysely): Promise<void>;
}

/**
 * A named, ordered set of migrations owned by one part of the system (a binding's tables). Each set has
 * its own ledger table, so bindings migrate independently; migration names sort in application order.
 */
export interface MigrationSet {
  readonly id: string;
  readonly migrations: Record<string, SqlMigration>;
  /** The set's ledger table when it is not `a2ac_<id>_migrations` (a ledger another tool keeps too). */
  readonly ledgerTable?: string;
  /** The lock table serialising its migrations when it is not ours (shared with another tool). */
  readonly lockTable?: string;
}

const LOCK_TABLE = 'a2ac_migrations_lock';

/** The ledger table of a set: which of its migrations are applied. */
export function migrationTableOf(set: MigrationSet): string {
  return set.ledgerTable ?? `a2ac_${set.id}_migrations`;
}

/** Applies every pending migration of each set, in order. Safe to re-run; serialised by Kysely's lock. */
export async function migrateSets(database: Database, sets: readonly MigrationSet[]): Promise<string[]> {
  const applied: string[] = [];
  for (const set of sets) {
    const migrator = new Migrator({
      db: database.db,
      provider: { getMigrations: () => Promise.resolve(set.migrations) },
      migrationTableName: migrationTableOf(set),
      migrationLockTableName: set.lockTable ?? LOCK_TABLE,
    });
    const { error, results } = await migrator.migrateToLatest();
    if (error) {
      const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
      const reason = error instanceof Error ? error.message : 'unknown error';
      throw new LocalError('CONFIG_INVALID', `migration ${set.id}/${failed} failed: ${reason}`, {
        cause: error,
      });
    }
    for (const r of results ?? []) if (r.status === 'Success') applied.push(`${set.id}/${r.migrationName}`);
  }
  return applied;
}

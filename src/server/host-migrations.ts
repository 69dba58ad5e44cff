import { SDK_OWNER_COLUMNS, SDK_STORE_TABLES } from '../a2a/host/sdk-stores.js';
import { LocalError } from '../shared/errors.js';
import { pendingMigrations, probeDatabase } from '../storage/sql/database-check.js';
import type { Database } from '../storage/sql/database.js';
import { migrateSets, type MigrationSet } from '../storage/sql/migrations.js';
import { ownerIdentityMigration, type OwnerColumn } from '../storage/sql/owner-columns.js';
import { callerTokenMigrations } from '../storage/acmp/replay-cache-kysely.js';
import {
  sdkIdMigrations,
  sdkRetentionMigrations,
  sdkStoreMigrations,
} from '../storage/a2a/sdk-store-migrations.js';
import type { HostModule } from './module.js';

/** The host's migrations: the SDK stores' tables, ours on them, and every module's (docs/host.md "Migrations"). */

/**
 * The SDK stores' tables, created by our migrations as the SDK's own `a2a-db upgrade` creates them and
 * kept in its ledgers (src/storage/a2a/sdk-store-migrations.ts; docs/host.md "Migrations").
 */
export const SDK_STORE_MIGRATIONS: readonly MigrationSet[] = sdkStoreMigrations(SDK_STORE_TABLES);

/**
 * Our migrations of the owners in the SDK's tables: owners become identities, `token-<n>` → `legacy:token-<n>` and the SDK's anonymous fallback `unknown` →
 * `anonymous` (src/shared/identity.ts).
 */
const sdkOwnerMigrations: MigrationSet = {
  id: 'sdk_owners',
  migrations: { '0001_owner_identities': ownerIdentityMigration(SDK_OWNER_COLUMNS, ['unknown']) },
};

/**
 * Applies the SDK stores' migrations, ours of the owners in them, and every module's own.
 * @throws LocalError `DATABASE_UNAVAILABLE` when the database cannot be reached, `CONFIG_INVALID` naming
 *   the migration that failed and why.
 */
export async function migrateAll(database: Database, modules: readonly HostModule[]): Promise<string[]> {
  await probeDatabase(database);
  return migrateSets(database, migrationSetsOf(modules));
}

/**
 * The migration sets, in order: the SDK stores' tables, the owners in them, the spent caller tokens
 * (docs/acmp-identity.md "Callers identified by DID"), then every module's.
 */
export function migrationSetsOf(modules: readonly HostModule[]): MigrationSet[] {
  return [
    ...SDK_STORE_MIGRATIONS,
    sdkOwnerMigrations,
    sdkIdMigrations(SDK_STORE_TABLES),
    sdkRetentionMigrations(SDK_STORE_TABLES),
    callerTokenMigrations,
    ...modules.flatMap((m) => m.migrations ?? []),
  ];
}

/** Every column that records a caller identity: the SDK's tables and each module's. */
export function ownerColumnsOf(modules: readonly HostModule[]): OwnerColumn[] {
  return [...SDK_OWNER_COLUMNS, ...modules.flatMap((m) => m.ownerColumns ?? [])];
}

/**
 * Makes sure the database can serve this build: it answers, and every migration is applied — applied
 * now when `migrate` is set, otherwise the host refuses to start with the exact command to run.
 * @throws LocalError `DATABASE_UNAVAILABLE`, `DATABASE_NOT_MIGRATED`, or `CONFIG_INVALID` when a migration fails.
 */
export async function prepareDatabase(
  database: Database,
  modules: readonly HostModule[],
  migrate: boolean,
): Promise<void> {
  await probeDatabase(database);
  if (migrate) {
    await migrateAll(database, modules);
    return;
  }
  const pending = await pendingMigrations(database, migrationSetsOf(modules));
  if (pending.length === 0) return;
  const shown = pending.length > 4 ? [...pending.slice(0, 4), `… ${pending.length - 4} more`] : pending;
  throw new LocalError(
    'DATABASE_NOT_MIGRATED',
    `the database ${database.location} is not migrated for this version of a2a-commerce (${pending.length} pending: ${shown.join(', ')}). ` +
      `Run: a2a-commerce migrate --db '${database.location}' — or start once with serve --migrate`,
  );
}

import { PostgresIntrospector, sql } from 'kysely';
import { ID_LIMITS } from '../../shared/id-rules.js';
import type { MigrationSet, SqlMigration } from '../sql/migrations.js';
import type { SqlKysely } from '../sql/query.js';

/** The table names the A2A SDK's database stores use (its exported `TASK_TABLE`, `PUSH_NOTIFICATION_TABLE`). */
export interface SdkStoreTables {
  readonly tasks: string;
  readonly pushNotificationConfigs: string;
}

/** The lock table the SDK's `a2a-db` tool serialises its migrations with; ours of its tables take it too. */
const SDK_LOCK_TABLE = 'a2a_migrations_lock';

/** The SDK's ledger of a store's migrations (`a2a_<table>_migrations`, as its `a2a-db` names it). */
function sdkLedgerOf(table: string): string {
  return `a2a_${table}_migrations`;
}

/**
 * The SDK's key columns compare bytewise on every database (`collate "C"` on PostgreSQL, `binary` on
 * SQLite), as its own migration declares them.
 */
function collated(db: SqlKysely, length: number) {
  const postgres = db.introspection instanceof PostgresIntrospector;
  return sql.raw(`varchar(${length}) ${postgres ? 'collate "C"' : 'collate binary'}`);
}

/** The SDK's `0001_create_tasks`, column for column (its payloads are `text` on PostgreSQL and SQLite). */
function createTasks(table: string): SqlMigration {
  return {
    async up(db: SqlKysely): Promise<void> {
      await db.schema
        .createTable(table)
        .addColumn('tenant', collated(db, 255), (c) => c.notNull())
        .addColumn('owner', collated(db, 255), (c) => c.notNull())
        .addColumn('id', collated(db, 36), (c) => c.notNull())
        .addColumn('context_id', collated(db, 36), (c) => c.notNull())
        .addColumn('status_last_updated', 'bigint', (c) => c.notNull())
        .addColumn('status_state', collated(db, 255))
        .addColumn('status', 'text')
        .addColumn('artifacts', 'text')
        .addColumn('history', 'text')
        .addColumn('metadata', 'text')
        .addColumn('protocol_version', 'varchar(255)')
        .addPrimaryKeyConstraint(`${table}_pkey`, ['tenant', 'owner', 'id'])
        .execute();
      await db.schema
        .createIndex(`${table}_scope_updated_idx`)
        .on(table)
        .columns(['tenant', 'owner', 'status_last_updated', 'id'])
        .execute();
      await db.schema
        .createIndex(`${table}_scope_context_updated_idx`)
        .on(table)
        .columns(['tenant', 'owner', 'context_id', 'status_last_updated', 'id'])
        .execute();
    },
    async down(db: SqlKysely): Promise<void> {
      await db.schema.dropTable(table).ifExists().execute();
    },
  };
}

/** The SDK's `0001_create_push_notification_configs`, column for column. */
function createPushNotificationConfigs(table: string): SqlMigration {
  return {
    async up(db: SqlKysely): Promise<void> {
      await db.schema
        .createTable(table)
        .addColumn('tenant', collated(db, 255), (c) => c.notNull())
        .addColumn('owner', collated(db, 255), (c) => c.notNull())
        .addColumn('task_id', collated(db, 36), (c) => c.notNull())
        .addColumn('config_id', collated(db, 36), (c) => c.notNull())
        .addColumn('config_data', 'text')
        .addColumn('protocol_version', 'varchar(255)')
        .addPrimaryKeyConstraint(`${table}_pkey`, ['tenant', 'owner', 'task_id', 'config_id'])
        .execute();
    },
    async down(db: SqlKysely): Promise<void> {
      await db.schema.dropTable(table).ifExists().execute();
    },
  };
}

/**
 * Widens the SDK's id columns from its varchar(36) to the host's id limit (src/shared/id-rules.ts), so
 * the ids real clients use (the A2A TCK's 37–44 characters, prefixed ids) fit on PostgreSQL as on SQLite.
 * PostgreSQL widens a varchar in place (no rewrite; keys and indexes stay). SQLite declares lengths
 * without enforcing them, so there is nothing to change there; the migration is recorded all the same.
 */
function widenIds(tables: SdkStoreTables): SqlMigration {
  const columns: [string, string][] = [
    [tables.tasks, 'id'],
    [tables.tasks, 'context_id'],
    [tables.pushNotificationConfigs, 'task_id'],
    [tables.pushNotificationConfigs, 'config_id'],
  ];
  return {
    async up(db: SqlKysely): Promise<void> {
      if (!(db.introspection instanceof PostgresIntrospector)) return;
      for (const [table, column] of columns) {
        await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN ${sql.ref(column)} TYPE ${collated(db, ID_LIMITS.id)}`.execute(
          db,
        );
      }
    },
  };
}

/**
 * An index on the SDK's task rows by state and last update, so the pruner finds ended tasks by age
 * (docs/operations.md "Retention") without scanning the table.
 */
function retentionIndex(tables: SdkStoreTables): SqlMigration {
  return {
    async up(db: SqlKysely): Promise<void> {
      await db.schema
        .createIndex(`${tables.tasks}_a2ac_retention_idx`)
        .on(tables.tasks)
        .columns(['status_state', 'status_last_updated'])
        .execute();
    },
  };
}

/** Our retention index on the SDK's task table (ledger `a2ac_sdk_retention_migrations`). */
export function sdkRetentionMigrations(tables: SdkStoreTables): MigrationSet {
  return { id: 'sdk_retention', migrations: { '0001_tasks_ended_index': retentionIndex(tables) } };
}

/**
 * Our own migrations of the SDK's tables, after the SDK's (in our ledger `a2ac_sdk_ids_migrations`, so
 * the SDK's ledgers keep only the migrations its `a2a-db` knows).
 */
export function sdkIdMigrations(tables: SdkStoreTables): MigrationSet {
  return { id: 'sdk_ids', migrations: { '0001_widen_ids': widenIds(tables) } };
}

/**
 * The tables of the A2A SDK's database stores, as our own migrations (the SDK ships its migrations only
 * through its `a2a-db` tool, which its package exports do not list). Each set keeps the SDK's own ledger
 * (`a2a_<table>_migrations`, the same migration names) and lock table, so a database the SDK's tool
 * migrated is already up to date here, ours reads as migrated to `a2a-db status`, and a ledger naming a
 * migration this build does not know fails the migration instead of being skipped. Pending ones are
 * named `sdk:<store>/<migration>`. src/storage/sdk-store-migrations.test.ts checks the schema matches
 * the one `a2a-db upgrade` creates.
 */
export function sdkStoreMigrations(tables: SdkStoreTables): readonly MigrationSet[] {
  return [
    {
      id: 'sdk:push-notification-configs',
      ledgerTable: sdkLedgerOf(tables.pushNotificationConfigs),
      lockTable: SDK_LOCK_TABLE,
      migrations: {
        '0001_create_push_notification_configs': createPushNotificationConfigs(
          tables.pushNotificationConfigs,
        ),
      },
    },
    {
      id: 'sdk:tasks',
      ledgerTable: sdkLedgerOf(tables.tasks),
      lockTable: SDK_LOCK_TABLE,
      migrations: { '0001_create_tasks': createTasks(tables.tasks) },
    },
  ];
}

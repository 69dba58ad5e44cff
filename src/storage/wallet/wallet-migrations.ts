import { sql } from 'kysely';
import type { MigrationSet, SqlMigration } from '../sql/migrations.js';
import type { SqlKysely } from '../sql/query.js';

/** Whether a migration runs on PostgreSQL (its compiler numbers placeholders; SQLite's writes `?`). */
function isPostgres(db: SqlKysely): boolean {
  return db.selectFrom('t').selectAll().where('a', '=', 1).compile().sql.includes('$1');
}

/** The spends the limits count, the write-ahead intents, and the append-only audit log (Layer 7 §6). */
const createTables: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('wallet_spends')
      .addColumn('spend_id', 'text', (c) => c.primaryKey())
      .addColumn('wallet_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('counterparty', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text')
      .addColumn('escrow_id', 'text')
      .addColumn('op_ref', 'text')
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('at_ms', 'bigint', (c) => c.notNull())
      .addColumn('counted_ms', 'bigint', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('wallet_spends_at')
      .on('wallet_spends')
      .columns(['wallet_id', 'at_ms'])
      .execute();
    await db.schema
      .createIndex('wallet_spends_escrow')
      .on('wallet_spends')
      .columns(['wallet_id', 'escrow_id'])
      .execute();
    await db.schema
      .createTable('wallet_intents')
      .addColumn('wallet_id', 'text', (c) => c.notNull())
      .addColumn('op_ref', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('agent', 'text', (c) => c.notNull())
      .addColumn('escrow_id', 'text')
      .addColumn('params', 'text', (c) => c.notNull())
      .addColumn('spend_id', 'text')
      .addColumn('counterparty', 'text')
      .addColumn('task_id', 'text')
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('created_ms', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('wallet_intents_pk', ['wallet_id', 'op_ref'])
      .execute();
    await db.schema
      .createTable('wallet_audit')
      .addColumn('wallet_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('ts_ms', 'bigint', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('amount', 'bigint')
      .addColumn('tier', 'text')
      .addColumn('counterparty', 'text')
      .addColumn('escrow_id', 'text')
      .addColumn('task_id', 'text')
      .addColumn('op_ref', 'text')
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('detail', 'text')
      .addPrimaryKeyConstraint('wallet_audit_pk', ['wallet_id', 'seq'])
      .execute();
    await appendOnly(db);
  },
  async down(db: SqlKysely): Promise<void> {
    for (const table of ['wallet_audit', 'wallet_intents', 'wallet_spends'])
      await db.schema.dropTable(table).execute();
    if (isPostgres(db)) await sql`DROP FUNCTION IF EXISTS wallet_audit_append_only()`.execute(db);
  },
};

/**
 * The database itself refuses to update an audit entry (Layer 7 §6.3: append-only). Deleting old entries
 * stays possible for the operator's retention (no library method deletes).
 */
async function appendOnly(db: SqlKysely): Promise<void> {
  if (isPostgres(db)) {
    await sql`CREATE FUNCTION wallet_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'wallet_audit is append-only'; END $$`.execute(db);
    await sql`CREATE TRIGGER wallet_audit_append_only BEFORE UPDATE ON wallet_audit
      FOR EACH ROW EXECUTE FUNCTION wallet_audit_append_only()`.execute(db);
    return;
  }
  await sql`CREATE TRIGGER wallet_audit_no_update BEFORE UPDATE ON wallet_audit
    BEGIN SELECT RAISE(ABORT, 'wallet_audit is append-only'); END`.execute(db);
}

/** The `wallet` migration set (SQLite and PostgreSQL): the buyer's wallet (docs/acmp-wallet.md). */
export const walletMigrations: MigrationSet = {
  id: 'wallet',
  migrations: { '0001_wallet': createTables },
};

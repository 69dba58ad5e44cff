import { sql } from 'kysely';
import type { MigrationSet, SqlMigration } from '../sql/migrations.js';
import type { OwnerColumn } from '../sql/owner-columns.js';
import type { SqlKysely } from '../sql/query.js';

/**
 * Where the escrow agent records caller identities (`a2a-commerce reassign`). Moving an account onto an
 * identity that already has one fails on its key and moves nothing (the command is one transaction).
 */
export const ESCROW_OWNER_COLUMNS: readonly OwnerColumn[] = [
  { table: 'escrows', column: 'buyer' },
  { table: 'escrows', column: 'payee' },
  { table: 'escrow_accounts', column: 'account' },
  { table: 'escrow_ops', column: 'party' },
  { table: 'escrow_payouts', column: 'account' },
  { table: 'escrow_credits', column: 'account' },
  { table: 'escrow_payout_configs', column: 'party' },
];

/** The escrows themselves, with the indexes the due-work scan and each party's listing read. */
async function createEscrows(db: SqlKysely): Promise<void> {
  await db.schema
    .createTable('escrows')
    .addColumn('escrow_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('buyer', 'text', (c) => c.notNull())
    .addColumn('payee', 'text')
    .addColumn('context_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('locked', 'bigint', (c) => c.notNull())
    .addColumn('released', 'bigint', (c) => c.notNull())
    .addColumn('reclaimed', 'bigint', (c) => c.notNull())
    .addColumn('valid_until', 'bigint', (c) => c.notNull())
    .addColumn('challenge_window_ms', 'bigint', (c) => c.notNull())
    .addColumn('agreed_price', 'bigint')
    .addColumn('tier', 'text')
    .addColumn('claim', 'text')
    .addColumn('dispute', 'text')
    .addColumn('claimed_tasks', 'text', (c) => c.notNull())
    .addColumn('settled', 'integer', (c) => c.notNull())
    .addColumn('expired', 'integer', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('next_due_at', 'bigint')
    // Conservation at the row: nothing leaves an escrow that was not locked into it.
    .addCheckConstraint(
      'escrows_conserve',
      sql`released >= 0 AND reclaimed >= 0 AND released + reclaimed <= locked`,
    )
    .execute();
  await db.schema.createIndex('escrows_due').on('escrows').column('next_due_at').execute();
  await db.schema
    .createIndex('escrows_buyer')
    .on('escrows')
    .columns(['tenant', 'buyer', 'updated_at', 'escrow_id'])
    .execute();
  await db.schema
    .createIndex('escrows_payee')
    .on('escrows')
    .columns(['tenant', 'payee', 'updated_at', 'escrow_id'])
    .execute();
}

const createTables: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('escrow_accounts')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('account', 'text', (c) => c.notNull())
      .addColumn('balance', 'bigint', (c) => c.notNull())
      .addColumn('credited', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('escrow_accounts_pk', ['tenant', 'account'])
      .execute();
    await createEscrows(db);
    await db.schema
      .createTable('escrow_ops')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('party', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('op_ref', 'text', (c) => c.notNull())
      .addColumn('params_hash', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('escrow_id', 'text')
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('escrow_ops_pk', ['tenant', 'party', 'method', 'scope', 'op_ref'])
      .execute();
    await db.schema
      .createTable('escrow_payouts')
      .addColumn('payout_id', 'text', (c) => c.primaryKey())
      .addColumn('escrow_id', 'text', (c) => c.notNull())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('account', 'text', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('paid_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('escrow_payouts_pending')
      .on('escrow_payouts')
      .columns(['paid_at', 'created_at'])
      .execute();
    await db.schema
      .createTable('escrow_events')
      .addColumn('escrow_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('escrow_events_pk', ['escrow_id', 'seq'])
      .execute();
  },
  async down(db: SqlKysely): Promise<void> {
    for (const table of ['escrow_events', 'escrow_payouts', 'escrow_ops', 'escrows', 'escrow_accounts'])
      await db.schema.dropTable(table).execute();
  },
};

/** The operator's deposits made under a reference, each at most once (`escrow credit --op-ref`). */
const createCredits: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('escrow_credits')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('ref', 'text', (c) => c.notNull())
      .addColumn('account', 'text', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('escrow_credits_pk', ['tenant', 'ref'])
      .execute();
  },
  async down(db: SqlKysely): Promise<void> {
    await db.schema.dropTable('escrow_credits').execute();
  },
};
/**
 * The buyer's DID of an escrow (Layer 7, docs/acmp-escrow.md "DID parties"): its disputes must be signed
 * with it. Signed claims and disputes live in the claim and dispute JSON, which older rows lack (null).
 */
const addBuyerDid: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema.alterTable('escrows').addColumn('buyer_did', 'text').execute();
  },
  async down(db: SqlKysely): Promise<void> {
    await db.schema.alterTable('escrows').dropColumn('buyer_did').execute();
  },
};
/**
 * Payout configuration (L7 §6.4, docs/acmp-escrow.md "Payout configuration"): each party's registered
 * payout list, the route of each payout (`identity` for the rows before it, which is how they were
 * paid), and the route of an escrow's payee payouts as its status shows it.
 */
const addPayoutConfig: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('escrow_payout_configs')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('party', 'text', (c) => c.notNull())
      .addColumn('payout', 'text', (c) => c.notNull())
      .addColumn('set_by', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('escrow_payout_configs_pk', ['tenant', 'party'])
      .execute();
    await db.schema
      .alterTable('escrow_payouts')
      .addColumn('route', 'text', (c) => c.notNull().defaultTo('identity'))
      .execute();
    await db.schema.alterTable('escrows').addColumn('payee_payout', 'text').execute();
  },
  async down(db: SqlKysely): Promise<void> {
    await db.schema.alterTable('escrows').dropColumn('payee_payout').execute();
    await db.schema.alterTable('escrow_payouts').dropColumn('route').execute();
    await db.schema.dropTable('escrow_payout_configs').execute();
  },
};

/** The `escrow` migration set (SQLite and PostgreSQL). */
export const escrowMigrations: MigrationSet = {
  id: 'escrow',
  migrations: {
    '0001_escrow_tables': createTables,
    '0002_escrow_credits': createCredits,
    '0003_escrow_buyer_did': addBuyerDid,
    '0004_escrow_payout_config': addPayoutConfig,
  },
};

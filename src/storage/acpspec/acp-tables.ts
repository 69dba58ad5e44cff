import { sql } from 'kysely';
import type { MigrationSet, SqlMigration } from '../sql/migrations.js';
import type { SqlKysely } from '../sql/query.js';
import { canonicaliseEvents, joinStates, splitLegacyStates } from './acp-state-migration.js';
import { ownerIdentityMigration, type OwnerColumn } from '../sql/owner-columns.js';

/** Where ACPspec records who owns a transaction. */
export const ACP_OWNER_COLUMNS: readonly OwnerColumn[] = [{ table: 'acp_transactions', column: 'owner' }];

/** Values of `acp_envelope_ids.role`. */
export const ENVELOPE_ID_ROLES = { ingested: 'ingested', state: 'state' } as const;

/** Table shapes of the `acp` migration set. */
export interface AcpTables {
  acp_envelopes: {
    envelope_id: string;
    transaction_id: string;
    kind: string;
    parent_envelope_id: string | null;
    state_envelope_id: string;
    received_at: string;
    body: string;
  };
  acp_transactions: {
    transaction_id: string;
    version: number;
    head_envelope_id: string;
    state_envelope_id: string;
    event_count: number;
    updated_at: string;
    owner: string;
  };
  acp_events: {
    transaction_id: string;
    seq: number;
    event_id: string;
    body: string;
  };
  /**
   * A transaction's state body (the header fields the receiver chose and the seven objects other than
   * events; src/acpspec/state-body.ts), written only when it changes; `version` is the head's version then.
   */
  acp_states: {
    transaction_id: string;
    version: number;
    body: string;
  };
  /** Every envelope id in the store, ingested or state; the primary key makes ids unique (docs/acpspec-core.md "Envelope ids are unique across the store"). */
  acp_envelope_ids: {
    envelope_id: string;
    transaction_id: string;
    role: string;
  };
}

const initial: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('acp_envelopes')
      .addColumn('envelope_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('transaction_id', 'varchar(128)', (c) => c.notNull())
      .addColumn('kind', 'varchar(16)', (c) => c.notNull())
      .addColumn('parent_envelope_id', 'varchar(64)')
      .addColumn('state_envelope_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('received_at', 'varchar(40)', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('acp_envelopes_state_idx')
      .on('acp_envelopes')
      .columns(['transaction_id', 'state_envelope_id'])
      .execute();
    await db.schema
      .createTable('acp_transactions')
      .addColumn('transaction_id', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('head_envelope_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('state_envelope_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('state_body', 'text', (c) => c.notNull())
      .addColumn('event_count', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('acp_events')
      .addColumn('transaction_id', 'varchar(128)', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('event_id', 'varchar(128)', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('acp_events_pk', ['transaction_id', 'seq'])
      .execute();
  },
  async down(db: SqlKysely): Promise<void> {
    await db.schema.dropTable('acp_events').execute();
    await db.schema.dropTable('acp_transactions').execute();
    await db.schema.dropTable('acp_envelopes').execute();
  },
};

/** Each transaction belongs to the caller that created it (existing rows: '' = anonymous). */
const transactionOwner: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .alterTable('acp_transactions')
      .addColumn('owner', 'varchar(255)', (c) => c.notNull().defaultTo(''))
      .execute();
  },
  async down(db: SqlKysely): Promise<void> {
    await db.schema.alterTable('acp_transactions').dropColumn('owner').execute();
  },
};

/**
 * Envelope ids are unique across the store (docs/acpspec-core.md): one registry of every id, ingested or minted by the
 * receiver for its state snapshot. Ids stored before it are registered (an ingested id wins when a client
 * reused a state id, which this migration is there to stop).
 */
const envelopeIds: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('acp_envelope_ids')
      .addColumn('envelope_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('transaction_id', 'varchar(128)', (c) => c.notNull())
      .addColumn('role', 'varchar(16)', (c) => c.notNull())
      .execute();
    // `WHERE true` keeps SQLite from reading ON CONFLICT as a join constraint of the SELECT.
    await sql`INSERT INTO acp_envelope_ids (envelope_id, transaction_id, role)
      SELECT envelope_id, transaction_id, ${sql.lit(ENVELOPE_ID_ROLES.ingested)} FROM acp_envelopes WHERE true
      ON CONFLICT DO NOTHING`.execute(db);
    await sql`INSERT INTO acp_envelope_ids (envelope_id, transaction_id, role)
      SELECT state_envelope_id, transaction_id, ${sql.lit(ENVELOPE_ID_ROLES.state)} FROM acp_envelopes WHERE true
      ON CONFLICT DO NOTHING`.execute(db);
  },
  async down(db: SqlKysely): Promise<void> {
    await db.schema.dropTable('acp_envelope_ids').execute();
  },
};

/**
 * The state is kept in parts (docs/acpspec-core.md "Ingest path"): acp_transactions becomes a small head row (no longer rewriting the
 * whole state on every envelope), the state body moves to acp_states (written when it changes), events are
 * stored as canonical text and the state's bytes are composed from them. The id registry answers "is this
 * envelope known in this transaction", so acp_envelopes loses the index that did.
 */
const stateParts: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('acp_states')
      .addColumn('transaction_id', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .execute();
    await splitLegacyStates(db);
    await canonicaliseEvents(db);
    await db.schema.alterTable('acp_transactions').dropColumn('state_body').execute();
    await db.schema.dropIndex('acp_envelopes_state_idx').execute();
  },
  async down(db: SqlKysely): Promise<void> {
    await db.schema
      .createIndex('acp_envelopes_state_idx')
      .on('acp_envelopes')
      .columns(['transaction_id', 'state_envelope_id'])
      .execute();
    await db.schema
      .alterTable('acp_transactions')
      .addColumn('state_body', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    await joinStates(db);
    await db.schema.dropTable('acp_states').execute();
  },
};

/** A caller's transactions are listed in id order (resources/list over MCP, docs/acpspec-mcp.md). */
const ownerListing: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createIndex('acp_transactions_owner_idx')
      .on('acp_transactions')
      .columns(['owner', 'transaction_id'])
      .execute();
  },
  async down(db: SqlKysely): Promise<void> {
    await db.schema.dropIndex('acp_transactions_owner_idx').execute();
  },
};

/** Migrations of the ACPspec tables (envelopes, transactions, states, events, envelope ids). */
export const acpMigrations: MigrationSet = {
  id: 'acp',
  migrations: {
    '0001_initial': initial,
    '0002_transaction_owner': transactionOwner,
    '0003_envelope_ids': envelopeIds,
    // Owners become identities: `token-<n>` → `legacy:token-<n>`, the anonymous '' → `anonymous`.
    '0004_owner_identities': ownerIdentityMigration(ACP_OWNER_COLUMNS, ['']),
    '0005_state_parts': stateParts,
    '0006_owner_listing': ownerListing,
  },
};

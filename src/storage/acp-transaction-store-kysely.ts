import type { Kysely, Migration } from 'kysely';
import type { Kind } from '../acpspec/constants.js';
import type { AcpEvent } from '../acpspec/envelope.js';
import type {
  CommitResult,
  IngestCommit,
  SequencedEvent,
  StoredEnvelope,
  TransactionHead,
  TransactionStore,
} from '../acpspec/transaction-store.js';
import type { MigrationSet } from './migrations.js';
import { ownerIdentityMigration, type OwnerColumn } from './owner-columns.js';
import { QueryShapes } from './query-shapes.js';

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
    state_body: string;
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
}

const initial: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
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
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('acp_events').execute();
    await db.schema.dropTable('acp_transactions').execute();
    await db.schema.dropTable('acp_envelopes').execute();
  },
};

/** Each transaction belongs to the caller that created it (existing rows: '' = anonymous). */
const transactionOwner: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('acp_transactions')
      .addColumn('owner', 'varchar(255)', (c) => c.notNull().defaultTo(''))
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('acp_transactions').dropColumn('owner').execute();
  },
};

/** Where ACPspec records who owns a transaction. */
export const ACP_OWNER_COLUMNS: readonly OwnerColumn[] = [{ table: 'acp_transactions', column: 'owner' }];

/** Migrations of the ACPspec tables (envelopes, transactions, events). */
export const acpMigrations: MigrationSet = {
  id: 'acp',
  migrations: {
    '0001_initial': initial,
    '0002_transaction_owner': transactionOwner,
    // Owners become identities: `token-<n>` → `legacy:token-<n>`, the anonymous '' → `anonymous`.
    '0003_owner_identities': ownerIdentityMigration(ACP_OWNER_COLUMNS, ['']),
  },
};

/** Thrown inside a database transaction to roll it back with a known outcome. */
class Rollback extends Error {
  constructor(readonly reason: 'stale' | 'duplicate') {
    super(reason);
  }
}

/**
 * {@link TransactionStore} on Kysely (SQLite or PostgreSQL). `commit` is one database transaction:
 * the head moves by compare-and-set on `version` (an insert that must not conflict for a new
 * transaction), then the envelope row (primary key guards duplicates) and the events are written.
 */
export class KyselyTransactionStore implements TransactionStore {
  private readonly db: Kysely<AcpTables>;
  private readonly shapes = new QueryShapes();

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  constructor(db: Kysely<any>) {
    this.db = db as Kysely<AcpTables>;
  }

  async findEnvelope(envelopeId: string): Promise<StoredEnvelope | undefined> {
    const { rows } = await this.shapes.run(this.db, 'findEnvelope', [envelopeId], () =>
      this.db
        .selectFrom('acp_envelopes')
        .select(['envelope_id', 'transaction_id', 'kind', 'body', 'state_envelope_id'])
        .where('envelope_id', '=', envelopeId),
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      envelopeId: row.envelope_id,
      transactionId: row.transaction_id,
      kind: row.kind as Kind,
      text: row.body,
      stateEnvelopeId: row.state_envelope_id,
    };
  }

  async head(transactionId: string): Promise<TransactionHead | undefined> {
    const { rows } = await this.shapes.run(this.db, 'head', [transactionId], () =>
      this.db.selectFrom('acp_transactions').selectAll().where('transaction_id', '=', transactionId),
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      transactionId: row.transaction_id,
      version: Number(row.version),
      headEnvelopeId: row.head_envelope_id,
      stateEnvelopeId: row.state_envelope_id,
      stateText: row.state_body,
      eventCount: Number(row.event_count),
      owner: row.owner,
    };
  }

  async isKnownEnvelope(transactionId: string, envelopeId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('acp_envelopes')
      .select('envelope_id')
      .where('transaction_id', '=', transactionId)
      .where((eb) => eb.or([eb('envelope_id', '=', envelopeId), eb('state_envelope_id', '=', envelopeId)]))
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  async commit(commit: IngestCommit): Promise<CommitResult> {
    try {
      const version = await this.db.transaction().execute(async (trx) => {
        const version = await moveHead(trx, this.shapes, commit);
        const values = {
          envelope_id: commit.envelope.envelopeId,
          transaction_id: commit.transactionId,
          kind: commit.envelope.kind,
          parent_envelope_id: commit.envelope.parentEnvelopeId ?? null,
          state_envelope_id: commit.state.envelopeId,
          received_at: commit.envelope.receivedAt,
          body: commit.envelope.text,
        };
        const inserted = await this.shapes.run(trx, 'insertEnvelope', Object.values(values), () =>
          trx
            .insertInto('acp_envelopes')
            .values(values)
            .onConflict((oc) => oc.column('envelope_id').doNothing()),
        );
        if (Number(inserted.numAffectedRows ?? 0n) !== 1) throw new Rollback('duplicate');
        if (commit.events.length > 0) {
          const rows = commit.events.map((event, i) => eventRow(commit, event, i));
          await this.shapes.run(trx, `insertEvents:${rows.length}`, rows.flatMap((r) => Object.values(r)), () => trx.insertInto('acp_events').values(rows));
        }
        return version;
      });
      return { ok: true, version };
    } catch (error) {
      if (error instanceof Rollback) return { ok: false, reason: error.reason };
      throw error;
    }
  }

  async events(transactionId: string, options: { after: number; limit: number }): Promise<SequencedEvent[]> {
    const rows = await this.db
      .selectFrom('acp_events')
      .select(['seq', 'body'])
      .where('transaction_id', '=', transactionId)
      .where('seq', '>', options.after)
      .orderBy('seq')
      .limit(options.limit)
      .execute();
    return rows.map((row) => ({ seq: Number(row.seq), event: JSON.parse(row.body) as AcpEvent }));
  }
}

function eventRow(commit: IngestCommit, event: AcpEvent, index: number): AcpTables['acp_events'] {
  return { transaction_id: commit.transactionId, seq: commit.firstSeq + index, event_id: event.event_id, body: JSON.stringify(event) };
}

/** Moves the head by compare-and-set; returns the new version or rolls back as `stale`. */
async function moveHead(trx: Kysely<AcpTables>, shapes: QueryShapes, commit: IngestCommit): Promise<number> {
  const version = commit.expectedVersion + 1;
  const eventCount = commit.firstSeq - 1 + commit.events.length;
  const row = {
    version,
    head_envelope_id: commit.envelope.envelopeId,
    state_envelope_id: commit.state.envelopeId,
    state_body: commit.state.text,
    event_count: eventCount,
    updated_at: commit.envelope.receivedAt,
  };
  const result =
    commit.expectedVersion === 0
      ? await shapes.run(trx, 'insertHead', [commit.transactionId, ...Object.values(row), commit.owner], () =>
          trx
            .insertInto('acp_transactions')
            .values({ transaction_id: commit.transactionId, ...row, owner: commit.owner })
            .onConflict((oc) => oc.column('transaction_id').doNothing()),
        )
      : await shapes.run(trx, 'updateHead', [...Object.values(row), commit.transactionId, commit.expectedVersion, commit.firstSeq - 1], () =>
          trx
            .updateTable('acp_transactions')
            .set(row)
            .where('transaction_id', '=', commit.transactionId)
            .where('version', '=', commit.expectedVersion)
            .where('event_count', '=', commit.firstSeq - 1),
        );
  if (Number(result.numAffectedRows ?? 0n) !== 1) throw new Rollback('stale');
  return version;
}

import type { Kysely } from 'kysely';
import { ACP_KINDS } from '../acpspec/constants.js';
import type { AcpEvent } from '../acpspec/envelope.js';
import type {
  CommitResult,
  EnvelopeIdUse,
  IngestCommit,
  SequencedEvent,
  StoredEnvelope,
  TransactionHead,
  TransactionStore,
} from '../acpspec/transaction-store.js';
import { LocalError } from '../shared/errors.js';
import { ENVELOPE_ID_ROLES, type AcpTables } from './acp-tables.js';
import { QueryShapes } from './query-shapes.js';

export { ACP_OWNER_COLUMNS, acpMigrations, type AcpTables } from './acp-tables.js';

/** Thrown inside a database transaction to roll it back with a known outcome. */
class Rollback extends Error {
  constructor(readonly reason: 'stale' | 'duplicate') {
    super(reason);
  }
}

/**
 * {@link TransactionStore} on Kysely (SQLite or PostgreSQL). `commit` is one database transaction:
 * the head moves by compare-and-set on `version` (an insert that must not conflict for a new
 * transaction), the envelope and state ids are registered (the registry's primary key keeps ids unique
 * across the store), then the envelope row and the events are written.
 */
export class KyselyTransactionStore implements TransactionStore {
  private readonly db: Kysely<AcpTables>;
  private readonly shapes = new QueryShapes();

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  constructor(db: Kysely<any>) {
    this.db = db as Kysely<AcpTables>;
  }

  async findEnvelope(envelopeId: string): Promise<StoredEnvelope | undefined> {
    const use = await this.findEnvelopeId(envelopeId);
    return use?.role === 'ingested' ? use.envelope : undefined;
  }

  async findEnvelopeId(envelopeId: string): Promise<EnvelopeIdUse | undefined> {
    const { rows } = await this.shapes.run(this.db, 'findEnvelopeId', [envelopeId], () =>
      this.db
        .selectFrom('acp_envelope_ids as i')
        .leftJoin('acp_envelopes as e', 'e.envelope_id', 'i.envelope_id')
        .select(['i.envelope_id', 'i.transaction_id', 'i.role', 'e.kind', 'e.body', 'e.state_envelope_id'])
        .where('i.envelope_id', '=', envelopeId),
    );
    const row = rows[0];
    return row === undefined ? undefined : decodeEnvelopeIdRow(row);
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
        await registerIds(trx, this.shapes, commit);
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

/** Registers the envelope id and the state id; rolls back as `duplicate` when either is used anywhere. */
async function registerIds(trx: Kysely<AcpTables>, shapes: QueryShapes, commit: IngestCommit): Promise<void> {
  const rows = [
    { envelope_id: commit.envelope.envelopeId, transaction_id: commit.transactionId, role: ENVELOPE_ID_ROLES.ingested },
    { envelope_id: commit.state.envelopeId, transaction_id: commit.transactionId, role: ENVELOPE_ID_ROLES.state },
  ];
  const inserted = await shapes.run(trx, 'registerIds', rows.flatMap((r) => Object.values(r)), () =>
    trx
      .insertInto('acp_envelope_ids')
      .values(rows)
      .onConflict((oc) => oc.column('envelope_id').doNothing()),
  );
  if (Number(inserted.numAffectedRows ?? 0n) !== rows.length) throw new Rollback('duplicate');
}

/** Decodes a row of the id registry joined to its envelope (a database row is checked, not cast). */
function decodeEnvelopeIdRow(row: {
  envelope_id: string;
  transaction_id: string;
  role: string;
  kind: string | null;
  body: string | null;
  state_envelope_id: string | null;
}): EnvelopeIdUse {
  if (row.role === ENVELOPE_ID_ROLES.state) return { role: 'state', transactionId: row.transaction_id };
  const kind = ACP_KINDS.find((k) => k === row.kind);
  if (row.role !== ENVELOPE_ID_ROLES.ingested || kind === undefined || row.body === null || row.state_envelope_id === null) {
    throw new LocalError('INVALID_STATE', 'acp_envelope_ids row does not match acp_envelopes');
  }
  return {
    role: 'ingested',
    envelope: { envelopeId: row.envelope_id, transactionId: row.transaction_id, kind, text: row.body, stateEnvelopeId: row.state_envelope_id },
  };
}

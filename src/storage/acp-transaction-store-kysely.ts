import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { ACP_KINDS } from '../acpspec/constants.js';
import { decodeStateBody, decodeStoredEvents } from '../acpspec/state-body.js';
import type {
  CommitResult,
  EnvelopeIdUse,
  IngestCommit,
  SequencedEvent,
  StoredEnvelope,
  StoredState,
  TransactionHead,
  TransactionStore,
} from '../acpspec/transaction-store.js';
import { LocalError } from '../shared/errors.js';
import { writeBatch } from './acp-batch-write.js';
import { ENVELOPE_ID_ROLES, type AcpTables } from './acp-tables.js';
import type { Database } from './database.js';
import { GroupCommitter, type GroupCommitOptions } from './group-commit.js';
import { inSqliteTransaction } from './sqlite-batch.js';
import { QueryShapes } from './query-shapes.js';

export { ACP_OWNER_COLUMNS, acpMigrations, type AcpTables } from './acp-tables.js';

/** Options of {@link KyselyTransactionStore}. */
export interface KyselyTransactionStoreOptions {
  /**
   * Group commit: commits waiting at the same time are written in one database transaction, up to
   * `maxBatch` (default 32), by `lanes` database transactions at once (default 1; SQLite has one
   * connection, PostgreSQL profits from a few).
   */
  groupCommit?: Partial<GroupCommitOptions>;
  /**
   * The raw SQLite handle under the Kysely instance (`Database.sqlite`): batches are then written on it
   * directly, holding Kysely's connection (see inSqliteTransaction).
   */
  sqlite?: BetterSqlite3.Database | undefined;
}

/**
 * {@link TransactionStore} on Kysely (SQLite or PostgreSQL). Commits go through a {@link GroupCommitter}:
 * the waiting ones are written together by {@link writeBatch} in one database transaction, each still all
 * or nothing and acknowledged only after that transaction commits. Reads decode and check every row.
 */
export class KyselyTransactionStore implements TransactionStore {
  private readonly db: Kysely<AcpTables>;
  private readonly shapes = new QueryShapes();
  private readonly committer: GroupCommitter<IngestCommit, CommitResult>;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  constructor(db: Kysely<any>, options: KyselyTransactionStoreOptions = {}) {
    this.db = db as Kysely<AcpTables>;
    const sqlite = options.sqlite;
    const statements = new Map<string, BetterSqlite3.Statement>();
    const write =
      sqlite === undefined
        ? (batch: readonly IngestCommit[]) =>
            this.db
              .transaction()
              .execute((trx) =>
                writeBatch(
                  trx,
                  (name, parameters, build) => this.shapes.run(trx, name, parameters, build),
                  batch,
                ),
              )
        : (batch: readonly IngestCommit[]) =>
            inSqliteTransaction(this.db, sqlite, this.shapes, statements, (run) =>
              writeBatch(this.db, run, batch),
            );
    this.committer = new GroupCommitter(write, (commit) => commit.transactionId, {
      maxBatch: options.groupCommit?.maxBatch ?? 32,
      lanes: options.groupCommit?.lanes ?? 1,
    });
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
      this.db.selectFrom('acp_transactions').select(HEAD_COLUMNS).where('transaction_id', '=', transactionId),
    );
    const row = rows[0];
    return row === undefined ? undefined : decodeHead(row);
  }

  async state(transactionId: string): Promise<StoredState | undefined> {
    // One statement reads the head and the body as of it (the body is written in the head's commit).
    const { rows } = await this.shapes.run(this.db, 'headAndBody', [transactionId], () =>
      this.db
        .selectFrom('acp_transactions as t')
        .innerJoin('acp_states as s', 's.transaction_id', 't.transaction_id')
        .select([...HEAD_COLUMNS.map((c) => `t.${c}` as const), 's.body'])
        .where('t.transaction_id', '=', transactionId),
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    const head = decodeHead(row);
    // Events are append-only: those up to the head's count are exactly the head's stream.
    const { rows: events } = await this.shapes.run(
      this.db,
      'stateEvents',
      [transactionId, head.eventCount],
      () =>
        this.db
          .selectFrom('acp_events')
          .select('body')
          .where('transaction_id', '=', transactionId)
          .where('seq', '<=', head.eventCount)
          .orderBy('seq'),
    );
    if (events.length !== head.eventCount)
      throw new LocalError('INVALID_STATE', 'the stored event stream does not match its head');
    const eventTexts = events.map((e) => e.body);
    return { head, body: decodeStateBody(row.body), events: decodeStoredEvents(eventTexts), eventTexts };
  }

  async isKnownEnvelope(transactionId: string, envelopeId: string): Promise<boolean> {
    const { rows } = await this.shapes.run(this.db, 'isKnownEnvelope', [envelopeId, transactionId], () =>
      this.db
        .selectFrom('acp_envelope_ids')
        .select('role')
        .where('envelope_id', '=', envelopeId)
        .where('transaction_id', '=', transactionId),
    );
    return rows.length > 0;
  }

  commit(commit: IngestCommit): Promise<CommitResult> {
    return this.committer.submit(commit);
  }

  /** Group commit so far: batches written and the commits they held (mean batch = items / batches). */
  get groupCommitStats(): { batches: number; items: number } {
    const { batches, items } = this.committer.stats;
    return { batches, items };
  }

  async events(transactionId: string, options: { after: number; limit: number }): Promise<SequencedEvent[]> {
    const { rows } = await this.shapes.run(
      this.db,
      'events',
      [transactionId, options.after, options.limit],
      () =>
        this.db
          .selectFrom('acp_events')
          .select(['seq', 'body'])
          .where('transaction_id', '=', transactionId)
          .where('seq', '>', options.after)
          .orderBy('seq')
          .limit(options.limit),
    );
    const events = decodeStoredEvents(rows.map((row) => row.body));
    return rows.map((row, i) => ({ seq: Number(row.seq), event: events[i]! }));
  }
}

/**
 * The store for an open database with the defaults that suit its dialect: on SQLite, batches written on
 * the raw handle; on PostgreSQL, four batches at once (each on its own pool connection).
 */
export function createKyselyTransactionStore(
  database: Database,
  options: KyselyTransactionStoreOptions = {},
): KyselyTransactionStore {
  return new KyselyTransactionStore(database.db, {
    sqlite: database.sqlite,
    ...options,
    groupCommit: { lanes: database.dialect === 'postgres' ? 4 : 1, ...options.groupCommit },
  });
}

const HEAD_COLUMNS = [
  'transaction_id',
  'version',
  'head_envelope_id',
  'state_envelope_id',
  'event_count',
  'updated_at',
  'owner',
] as const;

/** Decodes a head row (numbers may come back as strings or bigints from a driver). */
function decodeHead(
  row: Pick<AcpTables['acp_transactions'], (typeof HEAD_COLUMNS)[number]>,
): TransactionHead {
  const version = Number(row.version);
  const eventCount = Number(row.event_count);
  if (!Number.isSafeInteger(version) || version < 1 || !Number.isSafeInteger(eventCount) || eventCount < 0) {
    throw new LocalError('INVALID_STATE', 'acp_transactions row does not decode');
  }
  return {
    transactionId: row.transaction_id,
    version,
    headEnvelopeId: row.head_envelope_id,
    stateEnvelopeId: row.state_envelope_id,
    stateProducedAt: row.updated_at,
    eventCount,
    owner: row.owner,
  };
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
  if (
    row.role !== ENVELOPE_ID_ROLES.ingested ||
    kind === undefined ||
    row.body === null ||
    row.state_envelope_id === null
  ) {
    throw new LocalError('INVALID_STATE', 'acp_envelope_ids row does not match acp_envelopes');
  }
  return {
    role: 'ingested',
    envelope: {
      envelopeId: row.envelope_id,
      transactionId: row.transaction_id,
      kind,
      text: row.body,
      stateEnvelopeId: row.state_envelope_id,
    },
  };
}

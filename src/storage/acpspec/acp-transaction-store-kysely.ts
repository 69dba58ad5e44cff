import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery } from 'kysely';
import { ACP_KINDS } from '../../acpspec/constants.js';
import { decodeStateBody, decodeStoredEvents } from '../../acpspec/state-body.js';
import type {
  CommitResult,
  EnvelopeIdUse,
  IngestCommit,
  SequencedEvent,
  StoredEnvelope,
  StoredState,
  TransactionCommitted,
  TransactionHead,
  TransactionStore,
  TransactionSummary,
} from '../../acpspec/transaction-store.js';
import { LocalError } from '../../shared/errors.js';
import { NO_METRICS, type Metrics } from '../../shared/metrics.js';
import type { Logger } from '../../shared/logger.js';
import { ACP_COMMIT_CHANNEL, AcpCommitSignals, encodeCommitSignal } from './acp-commit-signals.js';
import { observedCommit } from '../sql/observed-commit.js';
import { writeBatch } from './acp-batch-write.js';
import { AcpStatements, type EnvelopeIdRow, type HeadRow } from './acp-sql.js';
import { ENVELOPE_ID_ROLES } from './acp-tables.js';
import type { Database } from '../sql/database.js';
import { countOn, runOn } from '../sql/query.js';
import { GroupCommitter, type GroupCommitOptions } from '../sql/group-commit.js';
import type { RunSql } from '../sql/sql-text.js';
import { SqliteTransactions } from '../sql/sqlite-batch.js';

export { ACP_OWNER_COLUMNS, acpMigrations } from './acp-tables.js';

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
   * directly, holding Kysely's connection (see SqliteTransactions).
   */
  sqlite?: BetterSqlite3.Database | undefined;
  /** Times each group commit (one observation per batch, docs/operations.md "Metrics"). */
  metrics?: Metrics | undefined;
  logger?: Logger | undefined;
}

/**
 * The NOTIFY of a batch's commits, inside its database transaction (PostgreSQL delivers it on commit, once
 * the rows are visible, to every host listening; docs/acpspec-mcp.md "Subscriptions").
 */
const NOTIFY_COMMITS = `SELECT pg_notify('${ACP_COMMIT_CHANNEL}', p) FROM unnest(CAST($1 AS text[])) AS p`;

/** What a batch committed: one entry per commit that moved its head. */
function committedOf(
  batch: readonly IngestCommit[],
  results: readonly CommitResult[],
): TransactionCommitted[] {
  return batch.flatMap((c, i) => {
    const result = results[i];
    return result?.ok ? [{ transactionId: c.transactionId, owner: c.owner, version: result.version }] : [];
  });
}

/**
 * {@link TransactionStore} on Kysely (SQLite or PostgreSQL). Each statement is written once as SQL text
 * (acp-sql.ts) and compiled for the dialect once. Commits go through a {@link GroupCommitter}: the
 * waiting ones are written together by {@link writeBatch} in one database transaction, each still all or
 * nothing and acknowledged only after that transaction commits. Reads decode and check every row.
 */
export class KyselyTransactionStore implements TransactionStore {
  private readonly statements: AcpStatements;
  private readonly run: RunSql;
  private readonly committer: GroupCommitter<IngestCommit, CommitResult>;
  private readonly signals: AcpCommitSignals;

  constructor(
    database: Pick<Database, 'db' | 'dialect'> & Partial<Pick<Database, 'url' | 'listens'>>,
    options: KyselyTransactionStoreOptions = {},
  ) {
    const { db } = database;
    const statements = new AcpStatements(database.dialect);
    this.statements = statements;
    this.run = runOn(db);
    const signals = new AcpCommitSignals(database, { logger: options.logger, metrics: options.metrics });
    this.signals = signals;
    const sqlite = options.sqlite === undefined ? undefined : new SqliteTransactions(db, options.sqlite);
    const metrics = options.metrics ?? NO_METRICS;
    const writeBatchOnce =
      sqlite === undefined
        ? (batch: readonly IngestCommit[]) =>
            db.transaction().execute(async (trx) => {
              const results = await writeBatch({ statements, run: runOn(trx), count: countOn(trx) }, batch);
              const payloads = committedOf(batch, results).map(encodeCommitSignal);
              if (signals.notifies && payloads.length > 0)
                await trx.executeQuery(CompiledQuery.raw(NOTIFY_COMMITS, [payloads]));
              return results;
            })
        : (batch: readonly IngestCommit[]) =>
            sqlite.execute(({ run, count }) => writeBatch({ statements, run, count }, batch));
    // One span and one timing per batch written (docs/operations.md "Tracing", "Metrics"), however many
    // ingests share it.
    const write = async (batch: readonly IngestCommit[]): Promise<CommitResult[]> => {
      const results = await observedCommit(
        metrics,
        { operation: 'acp_ingest', dialect: database.dialect, batchSize: batch.length },
        () => writeBatchOnce(batch),
      );
      for (const committed of committedOf(batch, results)) signals.local(committed);
      return results;
    };
    this.committer = new GroupCommitter(write, (commit) => commit.transactionId, {
      maxBatch: options.groupCommit?.maxBatch ?? 32,
      lanes: options.groupCommit?.lanes ?? 1,
    });
  }

  /** Opens the LISTEN connection of commit signals (PostgreSQL); call before serving. */
  async open(): Promise<void> {
    await this.signals.open();
  }

  async close(): Promise<void> {
    await this.signals.close();
  }

  watchCommits(listener: (committed: TransactionCommitted) => void): () => void {
    return this.signals.watch(listener);
  }

  async findEnvelope(envelopeId: string): Promise<StoredEnvelope | undefined> {
    const use = await this.findEnvelopeId(envelopeId);
    return use?.role === 'ingested' ? use.envelope : undefined;
  }

  async findEnvelopeId(envelopeId: string): Promise<EnvelopeIdUse | undefined> {
    const [row] = await this.run(this.statements.findEnvelopeId, [envelopeId]);
    return row === undefined ? undefined : decodeEnvelopeIdRow(row);
  }

  async head(transactionId: string): Promise<TransactionHead | undefined> {
    const [row] = await this.run(this.statements.head, [transactionId]);
    return row === undefined ? undefined : decodeHead(row);
  }

  async state(transactionId: string): Promise<StoredState | undefined> {
    // One statement reads the head and the body as of it (the body is written in the head's commit).
    const [row] = await this.run(this.statements.headAndBody, [transactionId]);
    if (row === undefined) return undefined;
    const head = decodeHead(row);
    // Events are append-only: those up to the head's count are exactly the head's stream.
    const events = await this.run(this.statements.stateEvents, [transactionId, head.eventCount]);
    if (events.length !== head.eventCount)
      throw new LocalError('INVALID_STATE', 'the stored event stream does not match its head');
    const eventTexts = events.map((e) => e.body);
    return { head, body: decodeStateBody(row.body), events: decodeStoredEvents(eventTexts), eventTexts };
  }

  async isKnownEnvelope(transactionId: string, envelopeId: string): Promise<boolean> {
    const rows = await this.run(this.statements.isKnownEnvelope, [envelopeId, transactionId]);
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

  async transactions(
    owner: string,
    options: { after: string; limit: number },
  ): Promise<TransactionSummary[]> {
    const rows = await this.run(this.statements.transactions, [owner, options.after, options.limit]);
    return rows.map((row) => ({
      transactionId: row.transaction_id,
      stateEnvelopeId: row.state_envelope_id,
      stateProducedAt: row.updated_at,
    }));
  }

  async events(transactionId: string, options: { after: number; limit: number }): Promise<SequencedEvent[]> {
    const rows = await this.run(this.statements.events, [transactionId, options.after, options.limit]);
    const events = decodeStoredEvents(rows.map((row) => row.body));
    return rows.map((row, i) => {
      const event = events[i];
      if (event === undefined) throw new LocalError('INVALID_STATE', 'acp_events rows do not decode');
      return { seq: row.seq, event };
    });
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
  return new KyselyTransactionStore(database, {
    sqlite: database.sqlite,
    ...options,
    groupCommit: { lanes: database.dialect === 'postgres' ? 4 : 1, ...options.groupCommit },
  });
}

/** A head from its decoded row, whose counts are checked (a version starts at 1, a count at 0). */
function decodeHead(row: HeadRow): TransactionHead {
  const version = row.version;
  const eventCount = row.event_count;
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
function decodeEnvelopeIdRow(row: EnvelopeIdRow): EnvelopeIdUse {
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

import type { CommitResult, IngestCommit } from '../../acpspec/transaction-store.js';
import { errorCode, LocalError } from '../../shared/errors.js';
import type { AcpStatements } from './acp-sql.js';
import { ENVELOPE_ID_ROLES } from './acp-tables.js';
import type { CountSql, RunSql } from '../sql/sql-text.js';

/** Where a batch is written: the store's statements and runners on the open database transaction. */
export interface BatchSql {
  readonly statements: AcpStatements;
  readonly run: RunSql;
  readonly count: CountSql;
}

/** Rows per multi-row statement at most; a power of two (statements come in sizes 1, 2, 4, … of it). */
const MAX_ROWS = 256;

/**
 * Writes a batch of ingest commits inside one database transaction (group commit, docs/acpspec-core.md "Ingest path"), with a few
 * multi-row statements for the whole batch instead of a round trip per envelope and table. Each commit is
 * still all or nothing: one whose envelope or state id is taken (`duplicate`) or whose head moved
 * (`stale`) writes nothing — the ids registered for it in this transaction are deleted again — and the
 * others go on. The caller gives each transaction at most one commit per batch.
 *
 * Order: (1) register every id (the registry's primary key keeps ids unique across the store and across
 * hosts); (2) create new heads and move existing ones by compare-and-set on `version` and `event_count`;
 * (3) for the commits left, insert the envelopes and events and write the state bodies that changed.
 */
export async function writeBatch(sql: BatchSql, commits: readonly IngestCommit[]): Promise<CommitResult[]> {
  const results: (CommitResult | undefined)[] = commits.map((c) =>
    c.envelope.envelopeId === c.state.envelopeId ? { ok: false, reason: 'duplicate' } : undefined,
  );
  const registered = await registerIds(
    sql,
    commits.filter((_, i) => results[i] === undefined),
  );
  const unregister: string[] = [];
  commits.forEach((c, i) => {
    if (results[i] !== undefined) return;
    const ingested = registered.has(idKey(c.envelope.envelopeId, c, ENVELOPE_ID_ROLES.ingested));
    const state = registered.has(idKey(c.state.envelopeId, c, ENVELOPE_ID_ROLES.state));
    if (ingested && state) return;
    results[i] = { ok: false, reason: 'duplicate' };
    if (ingested) unregister.push(c.envelope.envelopeId);
    if (state) unregister.push(c.state.envelopeId);
  });
  const moved = await moveHeads(
    sql,
    commits.filter((_, i) => results[i] === undefined),
  );
  const decided = commits.map((c, i): CommitResult => {
    const result = results[i];
    if (result !== undefined) return result;
    if (moved.has(c.transactionId)) return { ok: true, version: c.expectedVersion + 1 };
    unregister.push(c.envelope.envelopeId, c.state.envelopeId);
    return { ok: false, reason: 'stale' };
  });
  for (const ids of chunks(unregister)) await sql.run(sql.statements.unregisterIds.of(ids.length), ids);
  await writeRows(
    sql,
    commits.filter((_, i) => decided[i]?.ok === true),
  );
  return decided;
}

function idKey(id: string, commit: IngestCommit, role: string): string {
  return `${id}\u0000${commit.transactionId}\u0000${role}`;
}

/** Inserts both ids of every commit (sorted, so concurrent batches take index locks in one order); the keys inserted. */
async function registerIds(sql: BatchSql, commits: readonly IngestCommit[]): Promise<Set<string>> {
  const rows = commits
    .flatMap((c) => [
      [c.envelope.envelopeId, c.transactionId, ENVELOPE_ID_ROLES.ingested] as const,
      [c.state.envelopeId, c.transactionId, ENVELOPE_ID_ROLES.state] as const,
    ])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const inserted = new Set<string>();
  for (const chunk of chunks(rows)) {
    if (await insertedAll(sql, chunk)) {
      for (const [id, transactionId, role] of chunk) inserted.add(`${id}\u0000${transactionId}\u0000${role}`);
      continue;
    }
    const returned = await sql.run(sql.statements.registerIds.of(chunk.length), chunk.flat());
    for (const r of returned) inserted.add(`${r.envelope_id}\u0000${r.transaction_id}\u0000${r.role}`);
  }
  return inserted;
}

/**
 * On SQLite, the common case (every id new) as one plain INSERT, which costs about half the statement that
 * reports the rows it inserted: a statement that breaks a constraint is undone alone and the transaction goes
 * on (SQLite's default ABORT resolution), so a taken id only sends the chunk to that statement. False without
 * inserting anything when an id is taken, and always on PostgreSQL, where a failed statement aborts the
 * whole transaction.
 */
async function insertedAll(sql: BatchSql, rows: readonly (readonly unknown[])[]): Promise<boolean> {
  if (sql.statements.dialect !== 'sqlite') return false;
  try {
    await sql.count(sql.statements.registerNewIds.of(rows.length), rows.flat());
    return true;
  } catch (error) {
    if (isConstraintError(error)) return false;
    throw error;
  }
}

/** better-sqlite3's error for a broken PRIMARY KEY or UNIQUE constraint (`SQLITE_CONSTRAINT_…`). */
function isConstraintError(error: unknown): boolean {
  const code = errorCode(error);
  return typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT');
}

/** Creates new heads (a conflict-free insert) and moves existing ones (compare-and-set); the transactions that moved. */
async function moveHeads(sql: BatchSql, commits: readonly IngestCommit[]): Promise<Set<string>> {
  const moved = new Set<string>();
  const sorted = [...commits].sort((a, b) => (a.transactionId < b.transactionId ? -1 : 1));
  for (const chunk of chunks(sorted.filter((c) => c.expectedVersion === 0))) {
    const params = chunk.flatMap((c) => [...headValues(c), c.owner]);
    for (const r of await sql.run(sql.statements.insertHeads.of(chunk.length), params))
      moved.add(r.transaction_id);
  }
  for (const chunk of chunks(sorted.filter((c) => c.expectedVersion > 0))) {
    const params = chunk.flatMap((c) => [...headValues(c), c.expectedVersion, c.firstSeq - 1]);
    const [only] = chunk;
    // One head (every commit of a sender that waits for each ack): a plain compare-and-set, whose row count
    // answers, costs about half the joined UPDATE that returns the heads it moved.
    if (chunk.length === 1 && only !== undefined) {
      if ((await sql.count(sql.statements.moveHead, params)) === 1) moved.add(only.transactionId);
      continue;
    }
    for (const r of await sql.run(sql.statements.moveHeads.of(chunk.length), params))
      moved.add(r.transaction_id);
  }
  return moved;
}

/** The head after `c`: transaction id, version, head and state envelope ids, event count, updated at. */
function headValues(c: IngestCommit): unknown[] {
  return [
    c.transactionId,
    c.expectedVersion + 1,
    c.envelope.envelopeId,
    c.state.envelopeId,
    c.firstSeq - 1 + c.events.length,
    c.envelope.receivedAt,
  ];
}

/** The envelope rows, the event rows and the changed state bodies of the commits that moved their head. */
async function writeRows(sql: BatchSql, commits: readonly IngestCommit[]): Promise<void> {
  const { statements, run } = sql;
  for (const chunk of chunks(commits)) {
    const params = chunk.flatMap((c) => [
      c.envelope.envelopeId,
      c.transactionId,
      c.envelope.kind,
      c.envelope.parentEnvelopeId ?? null,
      c.state.envelopeId,
      c.envelope.receivedAt,
      c.envelope.text,
    ]);
    await run(statements.insertEnvelopes.of(chunk.length), params);
  }
  const events = commits.flatMap((c) =>
    c.events.map((e, i) => [c.transactionId, c.firstSeq + i, e.eventId, e.text] as const),
  );
  for (const chunk of chunks(events)) await run(statements.insertEvents.of(chunk.length), chunk.flat());
  const bodies = commits.flatMap((c) => {
    if (c.state.body === undefined) {
      if (c.expectedVersion === 0)
        throw new LocalError('INVALID_STATE', 'a new transaction needs its state body');
      return [];
    }
    return [[c.transactionId, c.expectedVersion + 1, c.state.body] as const];
  });
  for (const chunk of chunks(bodies)) await run(statements.writeStates.of(chunk.length), chunk.flat());
}

/** Splits rows into statements of 2^k rows (at most {@link MAX_ROWS}), so few SQL texts recur. */
function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length;) {
    let size = MAX_ROWS;
    while (size > rows.length - i) size >>= 1;
    out.push(rows.slice(i, i + size));
    i += size;
  }
  return out;
}

import { sql, type Compilable, type Kysely } from 'kysely';
import type { CommitResult, IngestCommit } from '../acpspec/transaction-store.js';
import { LocalError } from '../shared/errors.js';
import { ENVELOPE_ID_ROLES, type AcpTables } from './acp-tables.js';

/**
 * Runs one query shape (named SQL whose text depends only on the name; see QueryShapes) with parameters:
 * on a Kysely transaction, or on a raw SQLite handle whose connection the caller holds.
 */
export type RunShape = <R>(
  name: string,
  parameters: readonly unknown[],
  build: () => Compilable<R>,
) => Promise<{ rows: R[] }>;

/** Rows per multi-row statement at most; a power of two (statements come in sizes 1, 2, 4, … of it). */
const MAX_ROWS = 256;

/**
 * Writes a batch of ingest commits inside one database transaction `trx` (group commit, issue 10), with a
 * few multi-row statements for the whole batch instead of a round trip per envelope and table. Each commit
 * is still all or nothing: one whose envelope or state id is taken (`duplicate`) or whose head moved
 * (`stale`) writes nothing — the ids registered for it in this transaction are deleted again — and the
 * others go on. The caller gives each transaction at most one commit per batch.
 *
 * Order: (1) register every id (the registry's primary key keeps ids unique across the store and across
 * hosts); (2) create new heads and move existing ones by compare-and-set on `version` and `event_count`;
 * (3) for the commits left, insert the envelopes and events and write the state bodies that changed.
 */
export async function writeBatch(
  trx: Kysely<AcpTables>,
  run: RunShape,
  commits: readonly IngestCommit[],
): Promise<CommitResult[]> {
  const results: (CommitResult | undefined)[] = commits.map((c) =>
    c.envelope.envelopeId === c.state.envelopeId ? { ok: false, reason: 'duplicate' } : undefined,
  );
  const registered = await registerIds(
    trx,
    run,
    commits.filter((_, i) => results[i] === undefined),
  );
  const unregister: string[] = [];
  commits.forEach((c, i) => {
    if (results[i] !== undefined) return;
    const mine = [
      idKey(c.envelope.envelopeId, c, ENVELOPE_ID_ROLES.ingested),
      idKey(c.state.envelopeId, c, ENVELOPE_ID_ROLES.state),
    ];
    if (mine.every((key) => registered.has(key))) return;
    results[i] = { ok: false, reason: 'duplicate' };
    if (registered.has(mine[0]!)) unregister.push(c.envelope.envelopeId);
    if (registered.has(mine[1]!)) unregister.push(c.state.envelopeId);
  });
  const moved = await moveHeads(
    trx,
    run,
    commits.filter((_, i) => results[i] === undefined),
  );
  commits.forEach((c, i) => {
    if (results[i] !== undefined) return;
    if (moved.has(c.transactionId)) {
      results[i] = { ok: true, version: c.expectedVersion + 1 };
      return;
    }
    results[i] = { ok: false, reason: 'stale' };
    unregister.push(c.envelope.envelopeId, c.state.envelopeId);
  });
  for (const ids of chunks(unregister)) {
    await run(`unregisterIds:${ids.length}`, ids, () =>
      trx.deleteFrom('acp_envelope_ids').where('envelope_id', 'in', ids),
    );
  }
  await writeRows(
    trx,
    run,
    commits.filter((_, i) => results[i]?.ok === true),
  );
  return results.map((r) => r!);
}

function idKey(id: string, commit: IngestCommit, role: string): string {
  return `${id}\u0000${commit.transactionId}\u0000${role}`;
}

/** Inserts both ids of every commit (sorted, so concurrent batches take index locks in one order); the keys inserted. */
async function registerIds(
  trx: Kysely<AcpTables>,
  run: RunShape,
  commits: readonly IngestCommit[],
): Promise<Set<string>> {
  const rows = commits
    .flatMap((c) => [
      {
        envelope_id: c.envelope.envelopeId,
        transaction_id: c.transactionId,
        role: ENVELOPE_ID_ROLES.ingested,
      },
      { envelope_id: c.state.envelopeId, transaction_id: c.transactionId, role: ENVELOPE_ID_ROLES.state },
    ])
    .sort((a, b) => (a.envelope_id < b.envelope_id ? -1 : a.envelope_id > b.envelope_id ? 1 : 0));
  const inserted = new Set<string>();
  for (const chunk of chunks(rows)) {
    const { rows: returned } = await run(
      `registerIds:${chunk.length}`,
      chunk.flatMap((r) => Object.values(r)),
      () =>
        trx
          .insertInto('acp_envelope_ids')
          .values(chunk)
          .onConflict((oc) => oc.column('envelope_id').doNothing())
          .returning(['envelope_id', 'transaction_id', 'role']),
    );
    for (const r of returned) inserted.add(`${r.envelope_id}\u0000${r.transaction_id}\u0000${r.role}`);
  }
  return inserted;
}

/** Creates new heads (a conflict-free insert) and moves existing ones (compare-and-set); the transactions that moved. */
async function moveHeads(
  trx: Kysely<AcpTables>,
  run: RunShape,
  commits: readonly IngestCommit[],
): Promise<Set<string>> {
  const moved = new Set<string>();
  const sorted = [...commits].sort((a, b) => (a.transactionId < b.transactionId ? -1 : 1));
  const creates = sorted.filter((c) => c.expectedVersion === 0).map(headRow);
  for (const chunk of chunks(creates)) {
    const { rows } = await run(
      `insertHeads:${chunk.length}`,
      chunk.flatMap((r) => Object.values(r)),
      () =>
        trx
          .insertInto('acp_transactions')
          .values(chunk)
          .onConflict((oc) => oc.column('transaction_id').doNothing())
          .returning('transaction_id'),
    );
    for (const r of rows) moved.add(r.transaction_id);
  }
  for (const chunk of chunks(sorted.filter((c) => c.expectedVersion > 0))) {
    const parameters = chunk.flatMap((c) => {
      const row = headRow(c);
      return [
        row.transaction_id,
        row.version,
        row.head_envelope_id,
        row.state_envelope_id,
        row.event_count,
        row.updated_at,
        c.expectedVersion,
        c.firstSeq - 1,
      ];
    });
    const { rows } = await run(`moveHeads:${chunk.length}`, parameters, () => ({
      compile: () => casUpdate(chunk).compile(trx),
    }));
    for (const r of rows) moved.add(r.transaction_id);
  }
  return moved;
}

function headRow(c: IngestCommit): AcpTables['acp_transactions'] {
  return {
    transaction_id: c.transactionId,
    version: c.expectedVersion + 1,
    head_envelope_id: c.envelope.envelopeId,
    state_envelope_id: c.state.envelopeId,
    event_count: c.firstSeq - 1 + c.events.length,
    updated_at: c.envelope.receivedAt,
    owner: c.owner,
  };
}

/** One compare-and-set UPDATE for many heads (the same SQL on SQLite ≥ 3.33 and PostgreSQL). */
function casUpdate(chunk: readonly IngestCommit[]) {
  const values = chunk.map((c) => {
    const row = headRow(c);
    return sql`(${row.transaction_id}, CAST(${row.version} AS INTEGER), ${row.head_envelope_id}, ${row.state_envelope_id}, CAST(${row.event_count} AS INTEGER), ${row.updated_at}, CAST(${c.expectedVersion} AS INTEGER), CAST(${c.firstSeq - 1} AS INTEGER))`;
  });
  return sql<{
    transaction_id: string;
  }>`UPDATE acp_transactions SET version = v.column2, head_envelope_id = v.column3,
    state_envelope_id = v.column4, event_count = v.column5, updated_at = v.column6
    FROM (VALUES ${sql.join(values)}) AS v
    WHERE acp_transactions.transaction_id = v.column1 AND acp_transactions.version = v.column7 AND acp_transactions.event_count = v.column8
    RETURNING acp_transactions.transaction_id`;
}

/** The envelope rows, the event rows and the changed state bodies of the commits that moved their head. */
async function writeRows(
  trx: Kysely<AcpTables>,
  run: RunShape,
  commits: readonly IngestCommit[],
): Promise<void> {
  const envelopes = commits.map((c) => ({
    envelope_id: c.envelope.envelopeId,
    transaction_id: c.transactionId,
    kind: c.envelope.kind,
    parent_envelope_id: c.envelope.parentEnvelopeId ?? null,
    state_envelope_id: c.state.envelopeId,
    received_at: c.envelope.receivedAt,
    body: c.envelope.text,
  }));
  for (const chunk of chunks(envelopes)) {
    await run(
      `insertEnvelopes:${chunk.length}`,
      chunk.flatMap((r) => Object.values(r)),
      () => trx.insertInto('acp_envelopes').values(chunk),
    );
  }
  const events = commits.flatMap((c) =>
    c.events.map((e, i) => ({
      transaction_id: c.transactionId,
      seq: c.firstSeq + i,
      event_id: e.eventId,
      body: e.text,
    })),
  );
  for (const chunk of chunks(events)) {
    await run(
      `insertEvents:${chunk.length}`,
      chunk.flatMap((r) => Object.values(r)),
      () => trx.insertInto('acp_events').values(chunk),
    );
  }
  const bodies = commits.flatMap((c) => {
    if (c.state.body === undefined) {
      if (c.expectedVersion === 0)
        throw new LocalError('INVALID_STATE', 'a new transaction needs its state body');
      return [];
    }
    return [{ transaction_id: c.transactionId, version: c.expectedVersion + 1, body: c.state.body }];
  });
  for (const chunk of chunks(bodies)) {
    await run(
      `writeStates:${chunk.length}`,
      chunk.flatMap((r) => Object.values(r)),
      () =>
        trx
          .insertInto('acp_states')
          .values(chunk)
          .onConflict((oc) =>
            oc
              .column('transaction_id')
              .doUpdateSet((eb) => ({ version: eb.ref('excluded.version'), body: eb.ref('excluded.body') })),
          ),
    );
  }
}

/** Splits rows into statements of 2^k rows (at most {@link MAX_ROWS}), so few SQL texts recur. */
export function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length;) {
    let size = MAX_ROWS;
    while (size > rows.length - i) size >>= 1;
    out.push(rows.slice(i, i + size));
    i += size;
  }
  return out;
}

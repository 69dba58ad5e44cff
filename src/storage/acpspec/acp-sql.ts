import { z } from 'zod';
import type { SqlDialect } from '../sql/database.js';
import { IntColumn, noRows, rowOf, type RowDecoder } from '../sql/query.js';
import { dialectStatement, type Statement } from '../sql/sql-text.js';
import type { AcpTables } from './acp-tables.js';

/** The decoded shape of columns `C` of table `T`: each schema below must produce it. */
type Row<T extends keyof AcpTables, C extends keyof AcpTables[T]> = z.ZodType<Pick<AcpTables[T], C>>;

/** The head columns every read of a transaction's head selects. */
const HEAD_COLUMNS = [
  'transaction_id',
  'version',
  'head_envelope_id',
  'state_envelope_id',
  'event_count',
  'updated_at',
  'owner',
] as const;

/*
 * The rows the statements return, each decoded beside its statement (numbers may come back as strings or
 * bigints from a driver, so integer columns are read by IntColumn; decodeHead then checks their range).
 */
const HeadRowSchema = z.object({
  transaction_id: z.string(),
  version: IntColumn,
  head_envelope_id: z.string(),
  state_envelope_id: z.string(),
  event_count: IntColumn,
  updated_at: z.string(),
  owner: z.string(),
}) satisfies Row<'acp_transactions', (typeof HEAD_COLUMNS)[number]>;

/** A head row as decoded. */
export type HeadRow = z.infer<typeof HeadRowSchema>;

const EnvelopeIdRowSchema = z.object({
  envelope_id: z.string(),
  transaction_id: z.string(),
  role: z.string(),
  kind: z.string().nullable(),
  body: z.string().nullable(),
  state_envelope_id: z.string().nullable(),
});

/** A row of the id registry joined to its envelope (the envelope columns are null for a state id). */
export type EnvelopeIdRow = z.infer<typeof EnvelopeIdRowSchema>;

const ROWS = {
  findEnvelopeId: rowOf(EnvelopeIdRowSchema, 'acp_envelope_ids'),
  head: rowOf(HeadRowSchema, 'acp_transactions'),
  headAndBody: rowOf(HeadRowSchema.extend({ body: z.string() }), 'acp_transactions'),
  body: rowOf(z.object({ body: z.string() }) satisfies Row<'acp_events', 'body'>, 'acp_events'),
  transactions: rowOf(
    z.object({
      transaction_id: z.string(),
      state_envelope_id: z.string(),
      updated_at: z.string(),
    }) satisfies Row<'acp_transactions', 'transaction_id' | 'state_envelope_id' | 'updated_at'>,
    'acp_transactions',
  ),
  role: rowOf(z.object({ role: z.string() }) satisfies Row<'acp_envelope_ids', 'role'>, 'acp_envelope_ids'),
  event: rowOf(
    z.object({ seq: IntColumn, body: z.string() }) satisfies Row<'acp_events', 'seq' | 'body'>,
    'acp_events',
  ),
  registered: rowOf(
    z.object({
      envelope_id: z.string(),
      transaction_id: z.string(),
      role: z.string(),
    }) satisfies Row<'acp_envelope_ids', 'envelope_id' | 'transaction_id' | 'role'>,
    'acp_envelope_ids',
  ),
  transactionId: rowOf(
    z.object({ transaction_id: z.string() }) satisfies Row<'acp_transactions', 'transaction_id'>,
    'acp_transactions',
  ),
};

type Decoded<D> = D extends RowDecoder<infer R> ? R : never;

/**
 * `rows` tuples of `columns` for a multi-row VALUES list, numbered on from `$1`; a column is a template
 * in which `?` stands for its placeholder (e.g. `CAST(? AS INTEGER)`).
 */
function valuesList(rows: number, columns: readonly string[]): string {
  const tuples: string[] = [];
  let n = 0;
  for (let row = 0; row < rows; row++)
    tuples.push(`(${columns.map((column) => column.replace('?', `$${++n}`)).join(', ')})`);
  return tuples.join(', ');
}

const plain = (count: number): string[] => Array.from({ length: count }, () => '?');
const INTEGER = 'CAST(? AS INTEGER)';

/** The SQL text of each statement of the ACPspec store, written once with `$n` placeholders. */
const TEXT = {
  findEnvelopeId: `SELECT i.envelope_id, i.transaction_id, i.role, e.kind, e.body, e.state_envelope_id
    FROM acp_envelope_ids i LEFT JOIN acp_envelopes e ON e.envelope_id = i.envelope_id
    WHERE i.envelope_id = $1`,
  head: `SELECT ${HEAD_COLUMNS.join(', ')} FROM acp_transactions WHERE transaction_id = $1`,
  headAndBody: `SELECT ${HEAD_COLUMNS.map((c) => `t.${c}`).join(', ')}, s.body
    FROM acp_transactions t INNER JOIN acp_states s ON s.transaction_id = t.transaction_id
    WHERE t.transaction_id = $1`,
  stateEvents: `SELECT body FROM acp_events WHERE transaction_id = $1 AND seq <= $2 ORDER BY seq`,
  transactions: `SELECT transaction_id, state_envelope_id, updated_at FROM acp_transactions
    WHERE owner = $1 AND transaction_id > $2 ORDER BY transaction_id LIMIT $3`,
  isKnownEnvelope: `SELECT role FROM acp_envelope_ids WHERE envelope_id = $1 AND transaction_id = $2`,
  events: `SELECT seq, body FROM acp_events WHERE transaction_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
  registerIds: (rows: number) =>
    `INSERT INTO acp_envelope_ids (envelope_id, transaction_id, role) VALUES ${valuesList(rows, plain(3))}
    ON CONFLICT (envelope_id) DO NOTHING RETURNING envelope_id, transaction_id, role`,
  // Without ON CONFLICT or RETURNING: cheaper where SQLite undoes a failed statement alone (see writeBatch).
  registerNewIds: (rows: number) =>
    `INSERT INTO acp_envelope_ids (envelope_id, transaction_id, role) VALUES ${valuesList(rows, plain(3))}`,
  unregisterIds: (rows: number) =>
    `DELETE FROM acp_envelope_ids WHERE envelope_id IN (${plain(rows)
      .map((_, i) => `$${i + 1}`)
      .join(', ')})`,
  insertHeads: (rows: number) =>
    `INSERT INTO acp_transactions (${HEAD_COLUMNS.join(', ')}) VALUES ${valuesList(rows, plain(7))}
    ON CONFLICT (transaction_id) DO NOTHING RETURNING transaction_id`,
  // One compare-and-set UPDATE for many heads (the same SQL on SQLite ≥ 3.33 and PostgreSQL); the casts
  // give PostgreSQL the VALUES columns' types.
  moveHeads: (rows: number) =>
    `UPDATE acp_transactions SET version = v.column2, head_envelope_id = v.column3,
    state_envelope_id = v.column4, event_count = v.column5, updated_at = v.column6
    FROM (VALUES ${valuesList(rows, ['?', INTEGER, '?', '?', INTEGER, '?', INTEGER, INTEGER])}) AS v
    WHERE acp_transactions.transaction_id = v.column1 AND acp_transactions.version = v.column7
      AND acp_transactions.event_count = v.column8
    RETURNING acp_transactions.transaction_id`,
  // The compare-and-set of one head: the row count says whether it moved.
  moveHead: `UPDATE acp_transactions SET version = $2, head_envelope_id = $3, state_envelope_id = $4,
    event_count = $5, updated_at = $6 WHERE transaction_id = $1 AND version = $7 AND event_count = $8`,
  insertEnvelopes: (rows: number) =>
    `INSERT INTO acp_envelopes (envelope_id, transaction_id, kind, parent_envelope_id, state_envelope_id,
    received_at, body) VALUES ${valuesList(rows, plain(7))}`,
  insertEvents: (rows: number) =>
    `INSERT INTO acp_events (transaction_id, seq, event_id, body) VALUES ${valuesList(rows, plain(4))}`,
  writeStates: (rows: number) =>
    `INSERT INTO acp_states (transaction_id, version, body) VALUES ${valuesList(rows, plain(3))}
    ON CONFLICT (transaction_id) DO UPDATE SET version = excluded.version, body = excluded.body`,
} as const;

/** A multi-row statement in one dialect, compiled once per row count, with the decoder of its rows. */
class SizedStatement<R> {
  private readonly forms: Statement<R>[] = [];

  constructor(
    private readonly dialect: SqlDialect,
    private readonly text: (rows: number) => string,
    private readonly decode: RowDecoder<R>,
  ) {}

  /** The statement for `rows` rows (its parameters: each row's columns in turn). */
  of(rows: number): Statement<R> {
    return (this.forms[rows] ??= dialectStatement(this.dialect, this.text(rows), this.decode));
  }
}

/**
 * The statements of the ACPspec store in one dialect's form, each compiled once: the single-row reads on
 * construction, the multi-row writes per row count on first use (row counts are powers of two, so few
 * texts recur). Parameters are given as the text numbers them.
 */
export class AcpStatements {
  /** `$1` envelope id. */
  readonly findEnvelopeId: Statement<EnvelopeIdRow>;
  /** `$1` transaction id. */
  readonly head: Statement<HeadRow>;
  /** `$1` transaction id: the head and its state body in one row. */
  readonly headAndBody: Statement<Decoded<typeof ROWS.headAndBody>>;
  /** `$1` transaction id, `$2` the last seq. */
  readonly stateEvents: Statement<Decoded<typeof ROWS.body>>;
  /** `$1` owner, `$2` after this transaction id, `$3` limit. */
  readonly transactions: Statement<Decoded<typeof ROWS.transactions>>;
  /** `$1` envelope id, `$2` transaction id. */
  readonly isKnownEnvelope: Statement<Decoded<typeof ROWS.role>>;
  /** `$1` transaction id, `$2` after seq, `$3` limit. */
  readonly events: Statement<Decoded<typeof ROWS.event>>;
  /** Per row: envelope id, transaction id, role; returns the rows inserted. */
  readonly registerIds: SizedStatement<Decoded<typeof ROWS.registered>>;
  /** Per row: envelope id, transaction id, role; fails as a whole if any id is taken. */
  readonly registerNewIds: SizedStatement<never>;
  /** The envelope ids to delete. */
  readonly unregisterIds: SizedStatement<never>;
  /** Per row: the head columns in {@link HEAD_COLUMNS} order; returns the heads created. */
  readonly insertHeads: SizedStatement<Decoded<typeof ROWS.transactionId>>;
  /**
   * Per row: transaction id, version, head envelope id, state envelope id, event count, updated at, then
   * the expected version and event count; returns the heads moved.
   */
  readonly moveHeads: SizedStatement<Decoded<typeof ROWS.transactionId>>;
  /** One head's {@link moveHeads} row: changes one row when it moved. */
  readonly moveHead: Statement<never>;
  /** Per row: the columns of acp_envelopes in table order. */
  readonly insertEnvelopes: SizedStatement<never>;
  /** Per row: transaction id, seq, event id, body. */
  readonly insertEvents: SizedStatement<never>;
  /** Per row: transaction id, version, body (inserted or replacing the stored body). */
  readonly writeStates: SizedStatement<never>;

  constructor(readonly dialect: SqlDialect) {
    this.findEnvelopeId = dialectStatement(dialect, TEXT.findEnvelopeId, ROWS.findEnvelopeId);
    this.head = dialectStatement(dialect, TEXT.head, ROWS.head);
    this.headAndBody = dialectStatement(dialect, TEXT.headAndBody, ROWS.headAndBody);
    this.stateEvents = dialectStatement(dialect, TEXT.stateEvents, ROWS.body);
    this.transactions = dialectStatement(dialect, TEXT.transactions, ROWS.transactions);
    this.isKnownEnvelope = dialectStatement(dialect, TEXT.isKnownEnvelope, ROWS.role);
    this.events = dialectStatement(dialect, TEXT.events, ROWS.event);
    this.registerIds = new SizedStatement(dialect, TEXT.registerIds, ROWS.registered);
    this.registerNewIds = new SizedStatement(dialect, TEXT.registerNewIds, noRows);
    this.unregisterIds = new SizedStatement(dialect, TEXT.unregisterIds, noRows);
    this.insertHeads = new SizedStatement(dialect, TEXT.insertHeads, ROWS.transactionId);
    this.moveHeads = new SizedStatement(dialect, TEXT.moveHeads, ROWS.transactionId);
    this.moveHead = dialectStatement(dialect, TEXT.moveHead, noRows);
    this.insertEnvelopes = new SizedStatement(dialect, TEXT.insertEnvelopes, noRows);
    this.insertEvents = new SizedStatement(dialect, TEXT.insertEvents, noRows);
    this.writeStates = new SizedStatement(dialect, TEXT.writeStates, noRows);
  }
}

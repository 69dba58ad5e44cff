import type { AcpTables } from './acp-tables.js';
import type { SqlDialect } from '../sql/database.js';
import { dialectSql, type Statement } from '../sql/sql-text.js';

type Row<T extends keyof AcpTables, C extends keyof AcpTables[T]> = Pick<AcpTables[T], C>;

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

/** A head row as read (numbers may come back as strings or bigints from a driver; see decodeHead). */
export type HeadRow = Row<'acp_transactions', (typeof HEAD_COLUMNS)[number]>;

/** A row of the id registry joined to its envelope (the envelope columns are null for a state id). */
export interface EnvelopeIdRow {
  envelope_id: string;
  transaction_id: string;
  role: string;
  kind: string | null;
  body: string | null;
  state_envelope_id: string | null;
}

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

/** A multi-row statement in one dialect, compiled once per row count. */
class SizedStatement<R> {
  private readonly forms: Statement<R>[] = [];

  constructor(
    private readonly dialect: SqlDialect,
    private readonly text: (rows: number) => string,
  ) {}

  /** The statement for `rows` rows (its parameters: each row's columns in turn). */
  of(rows: number): Statement<R> {
    return (this.forms[rows] ??= dialectSql(this.dialect, this.text(rows)));
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
  readonly headAndBody: Statement<HeadRow & Row<'acp_states', 'body'>>;
  /** `$1` transaction id, `$2` the last seq. */
  readonly stateEvents: Statement<Row<'acp_events', 'body'>>;
  /** `$1` owner, `$2` after this transaction id, `$3` limit. */
  readonly transactions: Statement<
    Row<'acp_transactions', 'transaction_id' | 'state_envelope_id' | 'updated_at'>
  >;
  /** `$1` envelope id, `$2` transaction id. */
  readonly isKnownEnvelope: Statement<Row<'acp_envelope_ids', 'role'>>;
  /** `$1` transaction id, `$2` after seq, `$3` limit. */
  readonly events: Statement<Row<'acp_events', 'seq' | 'body'>>;
  /** Per row: envelope id, transaction id, role; returns the rows inserted. */
  readonly registerIds: SizedStatement<Row<'acp_envelope_ids', 'envelope_id' | 'transaction_id' | 'role'>>;
  /** Per row: envelope id, transaction id, role; fails as a whole if any id is taken. */
  readonly registerNewIds: SizedStatement<never>;
  /** The envelope ids to delete. */
  readonly unregisterIds: SizedStatement<never>;
  /** Per row: the head columns in {@link HEAD_COLUMNS} order; returns the heads created. */
  readonly insertHeads: SizedStatement<Row<'acp_transactions', 'transaction_id'>>;
  /**
   * Per row: transaction id, version, head envelope id, state envelope id, event count, updated at, then
   * the expected version and event count; returns the heads moved.
   */
  readonly moveHeads: SizedStatement<Row<'acp_transactions', 'transaction_id'>>;
  /** One head's {@link moveHeads} row: changes one row when it moved. */
  readonly moveHead: Statement<never>;
  /** Per row: the columns of acp_envelopes in table order. */
  readonly insertEnvelopes: SizedStatement<never>;
  /** Per row: transaction id, seq, event id, body. */
  readonly insertEvents: SizedStatement<never>;
  /** Per row: transaction id, version, body (inserted or replacing the stored body). */
  readonly writeStates: SizedStatement<never>;

  constructor(readonly dialect: SqlDialect) {
    this.findEnvelopeId = dialectSql(dialect, TEXT.findEnvelopeId);
    this.head = dialectSql(dialect, TEXT.head);
    this.headAndBody = dialectSql(dialect, TEXT.headAndBody);
    this.stateEvents = dialectSql(dialect, TEXT.stateEvents);
    this.transactions = dialectSql(dialect, TEXT.transactions);
    this.isKnownEnvelope = dialectSql(dialect, TEXT.isKnownEnvelope);
    this.events = dialectSql(dialect, TEXT.events);
    this.registerIds = new SizedStatement(dialect, TEXT.registerIds);
    this.registerNewIds = new SizedStatement(dialect, TEXT.registerNewIds);
    this.unregisterIds = new SizedStatement(dialect, TEXT.unregisterIds);
    this.insertHeads = new SizedStatement(dialect, TEXT.insertHeads);
    this.moveHeads = new SizedStatement(dialect, TEXT.moveHeads);
    this.moveHead = dialectSql(dialect, TEXT.moveHead);
    this.insertEnvelopes = new SizedStatement(dialect, TEXT.insertEnvelopes);
    this.insertEvents = new SizedStatement(dialect, TEXT.insertEvents);
    this.writeStates = new SizedStatement(dialect, TEXT.writeStates);
  }
}

import type { Kind } from './constants.js';
import type { AcpEvent } from './envelope.js';
import type { StateBody } from './state-body.js';

/** The current head of a transaction as the store holds it (a small row, read on every request). */
export interface TransactionHead {
  transactionId: string;
  /** Compare-and-set version; increases by one per ingested envelope. */
  version: number;
  /** The last ingested envelope. */
  headEnvelopeId: string;
  /** The materialised state snapshot after it. */
  stateEnvelopeId: string;
  /** The state snapshot's `produced_at` (the time of the last ingest). */
  stateProducedAt: string;
  /** Number of events in the stream (the last `seq`). */
  eventCount: number;
  /** The caller that created the transaction (its identity; `anonymous` on a host without tokens); only it may read or extend it. */
  owner: string;
}

/**
 * A transaction's materialised state as the store keeps it: the head, the state body (the snapshot's
 * header fields the receiver chose and the seven objects other than `events`) and the event stream.
 * The snapshot is these parts composed (src/acpspec/state-body.ts); the store never keeps it whole, so an
 * ingest writes what changed, not the state (docs/acpspec-core.md "Ingest path"). Decoded and checked when read.
 */
export interface StoredState {
  head: TransactionHead;
  body: StateBody;
  /** The events in stream order, and the canonical text of each (what the state's bytes are built from). */
  events: AcpEvent[];
  eventTexts: string[];
}

/** An ingested envelope as stored (immutable). */
export interface StoredEnvelope {
  envelopeId: string;
  transactionId: string;
  kind: Kind;
  /** Canonical (JCS) text as received. */
  text: string;
  /** The state snapshot this envelope produced. */
  stateEnvelopeId: string;
}

/**
 * What an envelope id names in the store. Envelope ids are unique across the whole store (all
 * transactions, ingested envelopes and the receiver's own state snapshots alike; docs/acpspec-core.md "Envelope ids are unique across the store"), so one id
 * never names two envelopes.
 */
export type EnvelopeIdUse =
  { role: 'ingested'; envelope: StoredEnvelope } | { role: 'state'; transactionId: string };

/** Everything one ingest writes, all or nothing. */
export interface IngestCommit {
  transactionId: string;
  /** The version read before computing; `0` means the transaction must not exist yet. */
  expectedVersion: number;
  /** The caller; recorded as the owner when the transaction is created (`expectedVersion` 0). */
  owner: string;
  envelope: {
    envelopeId: string;
    kind: Kind;
    parentEnvelopeId: string | undefined;
    text: string;
    receivedAt: string;
  };
  state: {
    envelopeId: string;
    /**
     * Canonical text of the new state body ({@link StateBody}) when it differs from the stored one;
     * required when the transaction is created, absent when only events were appended.
     */
    body: string | undefined;
  };
  /** Events to append, each with its canonical text; the store numbers them from `firstSeq`. */
  events: readonly { eventId: string; text: string }[];
  /** `eventCount + 1` of the head read (1 for a new transaction). */
  firstSeq: number;
}

/** Outcome of {@link TransactionStore.commit}. */
export type CommitResult =
  | { ok: true; version: number }
  /** Another writer moved the head (CAS failed) or created the transaction first. */
  | { ok: false; reason: 'stale' }
  /** The envelope id or the state id already names an envelope anywhere in the store. */
  | { ok: false; reason: 'duplicate' };

/** One transaction of a listing ({@link TransactionStore.transactions}): what a catalogue entry shows. */
export interface TransactionSummary {
  transactionId: string;
  /** The materialised state snapshot of the head. */
  stateEnvelopeId: string;
  /** The time of the last ingest. */
  stateProducedAt: string;
}

/**
 * One commit a store made, as followers of transactions hear of it (docs/acpspec-mcp.md "Subscriptions"):
 * which transaction moved and whose it is, never its content.
 */
export interface TransactionCommitted {
  transactionId: string;
  /** The transaction's owner (only the owner extends a transaction, so also the sender). */
  owner: string;
  /** The head's version after the commit: 1 when the commit created the transaction. */
  version: number;
}

/** An event with its position in the stream. */
export interface SequencedEvent {
  seq: number;
  event: AcpEvent;
}

/**
 * Storage port of the ACPspec receiver. Implementations: memory, Kysely (SQLite / PostgreSQL). The store
 * is the arbiter between hosts: every commit is guarded by compare-and-set on the transaction's version,
 * so two writers can never both move a head. A store may write several waiting commits in one database
 * transaction (group commit); each is still all or nothing, and `commit` resolves only once its commit is
 * durable.
 */
export interface TransactionStore {
  /** An ingested envelope by id. */
  findEnvelope(envelopeId: string): Promise<StoredEnvelope | undefined>;
  /** What `envelopeId` names anywhere in the store: an ingested envelope or a state snapshot. */
  findEnvelopeId(envelopeId: string): Promise<EnvelopeIdUse | undefined>;
  /** The head of a transaction. */
  head(transactionId: string): Promise<TransactionHead | undefined>;
  /**
   * The materialised state, read consistently (the head, the body as of that head, events up to its
   * `eventCount`), decoded and checked.
   * @throws LocalError `INVALID_STATE` when a stored part does not decode.
   */
  state(transactionId: string): Promise<StoredState | undefined>;
  /** Whether `envelopeId` is an ingested envelope or a state snapshot of this transaction. */
  isKnownEnvelope(transactionId: string, envelopeId: string): Promise<boolean>;
  /**
   * Stores the envelope, moves the head, writes the state body when given and appends events; all or
   * nothing. Refused (`duplicate`) when the envelope id or the state id is already used anywhere in the store.
   */
  commit(commit: IngestCommit): Promise<CommitResult>;
  /**
   * The transactions `owner` created, ordered by transaction id, those after `after` (a transaction id;
   * `''` from the start), at most `limit`.
   */
  transactions(owner: string, options: { after: string; limit: number }): Promise<TransactionSummary[]>;
  /** Events with `seq > after`, ascending, at most `limit`. */
  events(transactionId: string, options: { after: number; limit: number }): Promise<SequencedEvent[]>;
  /**
   * Calls `listener` after each commit is durable — a replay, which commits nothing, never — until the
   * returned function is called. A store shared by several hosts reports every host's commits (PostgreSQL:
   * LISTEN/NOTIFY, once the store is opened); otherwise those of this process. A listener that throws
   * does not stop the others.
   */
  watchCommits(listener: (committed: TransactionCommitted) => void): () => void;
}

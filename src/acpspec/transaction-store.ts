import type { Kind } from './constants.js';
import type { AcpEvent } from './envelope.js';

/** The current head of a transaction as the store holds it. */
export interface TransactionHead {
  transactionId: string;
  /** Compare-and-set version; increases by one per ingested envelope. */
  version: number;
  /** The last ingested envelope. */
  headEnvelopeId: string;
  /** The materialised state snapshot after it. */
  stateEnvelopeId: string;
  /** Canonical (JCS) text of the state snapshot envelope. */
  stateText: string;
  /** Number of events in the stream (the last `seq`). */
  eventCount: number;
  /** The caller that created the transaction (its identity; `anonymous` on a host without tokens); only it may read or extend it. */
  owner: string;
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
 * transactions, ingested envelopes and the receiver's own state snapshots alike; issue 9), so one id
 * never names two envelopes.
 */
export type EnvelopeIdUse =
  | { role: 'ingested'; envelope: StoredEnvelope }
  | { role: 'state'; transactionId: string };

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
  state: { envelopeId: string; text: string };
  /** Events to append; the store numbers them from `firstSeq`. */
  events: readonly AcpEvent[];
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

/** An event with its position in the stream. */
export interface SequencedEvent {
  seq: number;
  event: AcpEvent;
}

/**
 * Storage port of the ACPspec receiver. Implementations: memory, Kysely (SQLite / PostgreSQL). The store
 * is the arbiter between hosts: `commit` is one database transaction guarded by compare-and-set on the
 * transaction's version, so two writers can never both move a head.
 */
export interface TransactionStore {
  /** An ingested envelope by id. */
  findEnvelope(envelopeId: string): Promise<StoredEnvelope | undefined>;
  /** What `envelopeId` names anywhere in the store: an ingested envelope or a state snapshot. */
  findEnvelopeId(envelopeId: string): Promise<EnvelopeIdUse | undefined>;
  /** The head of a transaction. */
  head(transactionId: string): Promise<TransactionHead | undefined>;
  /** Whether `envelopeId` is an ingested envelope or a state snapshot of this transaction. */
  isKnownEnvelope(transactionId: string, envelopeId: string): Promise<boolean>;
  /**
   * Stores the envelope, moves the head, replaces the state and appends events; all or nothing. Refused
   * (`duplicate`) when the envelope id or the state id is already used anywhere in the store.
   */
  commit(commit: IngestCommit): Promise<CommitResult>;
  /** Events with `seq > after`, ascending, at most `limit`. */
  events(transactionId: string, options: { after: number; limit: number }): Promise<SequencedEvent[]>;
}

import { decodeStateBody, decodeStoredEvents } from '../../acpspec/state-body.js';
import type {
  CommitResult,
  EnvelopeIdUse,
  IngestCommit,
  SequencedEvent,
  StoredEnvelope,
  StoredState,
  TransactionHead,
  TransactionCommitted,
  TransactionStore,
  TransactionSummary,
} from '../../acpspec/transaction-store.js';
import { IngestFeed } from '../../acpspec/ingest-feed.js';
import { LocalError } from '../../shared/errors.js';

/**
 * In-memory {@link TransactionStore} for tests and single-process use. Each commit checks and writes
 * synchronously, so it is atomic within the process. It keeps what the database stores keep — the state
 * body and event texts — and decodes them on read the same way.
 */
export class MemoryTransactionStore implements TransactionStore {
  private readonly envelopes = new Map<string, StoredEnvelope>();
  private readonly heads = new Map<string, TransactionHead>();
  private readonly bodies = new Map<string, string>();
  private readonly streams = new Map<string, string[]>();
  private readonly known = new Map<string, Set<string>>();
  /** State snapshot id → transaction; with `envelopes`, every envelope id in the store (unique; docs/acpspec-core.md "Envelope ids are unique across the store"). */
  private readonly stateIds = new Map<string, string>();
  private readonly feed = new IngestFeed();

  findEnvelope(envelopeId: string): Promise<StoredEnvelope | undefined> {
    return Promise.resolve(this.envelopes.get(envelopeId));
  }

  findEnvelopeId(envelopeId: string): Promise<EnvelopeIdUse | undefined> {
    const envelope = this.envelopes.get(envelopeId);
    if (envelope !== undefined) return Promise.resolve({ role: 'ingested', envelope });
    const transactionId = this.stateIds.get(envelopeId);
    return Promise.resolve(transactionId === undefined ? undefined : { role: 'state', transactionId });
  }

  head(transactionId: string): Promise<TransactionHead | undefined> {
    return Promise.resolve(this.heads.get(transactionId));
  }

  state(transactionId: string): Promise<StoredState | undefined> {
    const head = this.heads.get(transactionId);
    if (head === undefined) return Promise.resolve(undefined);
    const body = this.bodies.get(transactionId);
    if (body === undefined)
      return Promise.reject(new LocalError('INVALID_STATE', 'a transaction head without its state body'));
    const eventTexts = (this.streams.get(transactionId) ?? []).slice(0, head.eventCount);
    try {
      return Promise.resolve({
        head,
        body: decodeStateBody(body),
        events: decodeStoredEvents(eventTexts),
        eventTexts,
      });
    } catch (error) {
      return Promise.reject(
        error instanceof Error ? error : new LocalError('INVALID_STATE', 'stored state does not decode'),
      );
    }
  }

  isKnownEnvelope(transactionId: string, envelopeId: string): Promise<boolean> {
    return Promise.resolve(this.known.get(transactionId)?.has(envelopeId) ?? false);
  }

  commit(commit: IngestCommit): Promise<CommitResult> {
    const { transactionId } = commit;
    const ids = [commit.envelope.envelopeId, commit.state.envelopeId];
    const used = ids[0] === ids[1] || ids.some((id) => this.envelopes.has(id) || this.stateIds.has(id));
    if (used) return Promise.resolve({ ok: false, reason: 'duplicate' });
    const head = this.heads.get(transactionId);
    if ((head?.version ?? 0) !== commit.expectedVersion)
      return Promise.resolve({ ok: false, reason: 'stale' });
    const stream = this.streams.get(transactionId) ?? [];
    if (stream.length + 1 !== commit.firstSeq) return Promise.resolve({ ok: false, reason: 'stale' });
    if (head === undefined && commit.state.body === undefined) {
      return Promise.reject(new LocalError('INVALID_STATE', 'a new transaction needs its state body'));
    }
    const version = commit.expectedVersion + 1;
    this.envelopes.set(commit.envelope.envelopeId, {
      envelopeId: commit.envelope.envelopeId,
      transactionId,
      kind: commit.envelope.kind,
      text: commit.envelope.text,
      stateEnvelopeId: commit.state.envelopeId,
    });
    this.stateIds.set(commit.state.envelopeId, transactionId);
    if (commit.state.body !== undefined) this.bodies.set(transactionId, commit.state.body);
    for (const event of commit.events) stream.push(event.text);
    this.streams.set(transactionId, stream);
    const known = this.known.get(transactionId) ?? new Set<string>();
    known.add(commit.envelope.envelopeId).add(commit.state.envelopeId);
    this.known.set(transactionId, known);
    this.heads.set(transactionId, {
      transactionId,
      version,
      headEnvelopeId: commit.envelope.envelopeId,
      stateEnvelopeId: commit.state.envelopeId,
      stateProducedAt: commit.envelope.receivedAt,
      eventCount: stream.length,
      owner: head?.owner ?? commit.owner,
    });
    this.feed.publish({ transactionId, owner: head?.owner ?? commit.owner, version });
    return Promise.resolve({ ok: true, version });
  }

  watchCommits(listener: (committed: TransactionCommitted) => void): () => void {
    return this.feed.subscribe(listener);
  }

  transactions(owner: string, options: { after: string; limit: number }): Promise<TransactionSummary[]> {
    const owned = [...this.heads.values()]
      .filter((head) => head.owner === owner && head.transactionId > options.after)
      .sort((a, b) => compareIds(a.transactionId, b.transactionId))
      .slice(0, options.limit);
    return Promise.resolve(owned.map(summaryOf));
  }

  events(transactionId: string, options: { after: number; limit: number }): Promise<SequencedEvent[]> {
    const stream = this.streams.get(transactionId) ?? [];
    const from = Math.max(options.after, 0);
    // seq n sits at index n-1.
    const events = decodeStoredEvents(stream.slice(from, from + options.limit));
    return Promise.resolve(events.map((event, i) => ({ seq: from + i + 1, event })));
  }
}

/** Ids compare by code unit (a database store orders by its column's collation: each store pages consistently). */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function summaryOf(head: TransactionHead): TransactionSummary {
  return {
    transactionId: head.transactionId,
    stateEnvelopeId: head.stateEnvelopeId,
    stateProducedAt: head.stateProducedAt,
  };
}

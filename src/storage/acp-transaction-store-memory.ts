import type {
  CommitResult,
  EnvelopeIdUse,
  IngestCommit,
  SequencedEvent,
  StoredEnvelope,
  TransactionHead,
  TransactionStore,
} from '../acpspec/transaction-store.js';

/**
 * In-memory {@link TransactionStore} for tests and single-process use. Each commit checks and writes
 * synchronously, so it is atomic within the process.
 */
export class MemoryTransactionStore implements TransactionStore {
  private readonly envelopes = new Map<string, StoredEnvelope>();
  private readonly heads = new Map<string, TransactionHead>();
  private readonly streams = new Map<string, SequencedEvent[]>();
  private readonly known = new Map<string, Set<string>>();
  /** State snapshot id → transaction; with `envelopes`, every envelope id in the store (unique; issue 9). */
  private readonly stateIds = new Map<string, string>();

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

  isKnownEnvelope(transactionId: string, envelopeId: string): Promise<boolean> {
    return Promise.resolve(this.known.get(transactionId)?.has(envelopeId) ?? false);
  }

  commit(commit: IngestCommit): Promise<CommitResult> {
    const { transactionId } = commit;
    const ids = [commit.envelope.envelopeId, commit.state.envelopeId];
    const used = ids[0] === ids[1] || ids.some((id) => this.envelopes.has(id) || this.stateIds.has(id));
    if (used) return Promise.resolve({ ok: false, reason: 'duplicate' });
    const head = this.heads.get(transactionId);
    if ((head?.version ?? 0) !== commit.expectedVersion) return Promise.resolve({ ok: false, reason: 'stale' });
    const stream = this.streams.get(transactionId) ?? [];
    if (stream.length + 1 !== commit.firstSeq) return Promise.resolve({ ok: false, reason: 'stale' });
    const version = commit.expectedVersion + 1;
    this.envelopes.set(commit.envelope.envelopeId, {
      envelopeId: commit.envelope.envelopeId,
      transactionId,
      kind: commit.envelope.kind,
      text: commit.envelope.text,
      stateEnvelopeId: commit.state.envelopeId,
    });
    this.stateIds.set(commit.state.envelopeId, transactionId);
    commit.events.forEach((event, i) => stream.push({ seq: commit.firstSeq + i, event }));
    this.streams.set(transactionId, stream);
    const known = this.known.get(transactionId) ?? new Set<string>();
    known.add(commit.envelope.envelopeId).add(commit.state.envelopeId);
    this.known.set(transactionId, known);
    this.heads.set(transactionId, {
      transactionId,
      version,
      headEnvelopeId: commit.envelope.envelopeId,
      stateEnvelopeId: commit.state.envelopeId,
      stateText: commit.state.text,
      eventCount: stream.length,
      owner: head?.owner ?? commit.owner,
    });
    return Promise.resolve({ ok: true, version });
  }

  events(transactionId: string, options: { after: number; limit: number }): Promise<SequencedEvent[]> {
    const stream = this.streams.get(transactionId) ?? [];
    // seq n sits at index n-1.
    return Promise.resolve(stream.slice(Math.max(options.after, 0), Math.max(options.after, 0) + options.limit));
  }
}

import { NO_METRICS, type Metrics } from '../shared/metrics.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { ANONYMOUS_IDENTITY } from '../shared/identity.js';
import type { IdSource } from '../shared/ids.js';
import { LocalError } from '../shared/errors.js';
import { canonicalJson } from '../shared/jcs.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { ACP_DEFAULT_ACCEPTED_VERSIONS, ACP_VERSION, type Kind } from './constants.js';
import { assertPatchPolicy } from './delta.js';
import {
  envelopeKind,
  isDelta,
  kindLabel,
  type AcpAck,
  type AcpEvent,
  type Envelope,
  type Producer,
  type SnapshotEnvelope,
} from './envelope.js';
import { AcpError, isAcpError, isAcpId } from './errors.js';
import { createHeldStateCache, type HeldState, type HeldStateCache } from './held-state.js';
import { containsPersonalData } from './pii.js';
import type { TransactionHead, TransactionStore, TransactionSummary } from './transaction-store.js';
import { heldEventTexts, TransitionCommitter, type Inbound, type ParentMismatch } from './receiver-commit.js';
import { composeSnapshot, composeStateText, stateBodyOf } from './state-body.js';
import { parseEnvelope } from './validate.js';
import { followEvents } from './follow.js';
import { transactionPage, type TransactionPage } from './transaction-page.js';

/** Options of {@link createAcpReceiver}. */
export interface AcpReceiverOptions {
  store: TransactionStore;
  /** Kinds this agent accepts (its card's `accepts`). */
  accepts: readonly Kind[];
  /** Envelope versions accepted (default `['0.1']`). */
  acceptedVersions?: readonly string[];
  /** This receiver's agent id, matched against consent `granted_to`. */
  receiverAgentId: string;
  /** Producer written on materialised state snapshots. */
  producer: Producer;
  clock?: Clock;
  /** Id source; `newId()` MUST return a UUIDv7 (see `newEnvelopeId`). */
  ids?: IdSource;
  logger?: Logger;
  /** Approximate memory budget of the states held in memory (default 128 MiB). */
  stateCacheBytes?: number;
  /** Counts envelopes by kind and outcome, consent conflicts and the ingest latency (docs/operations.md "Metrics"). */
  metrics?: Metrics;
}

/**
 * Who is calling: the caller's identity (src/shared/identity.ts); absent means `anonymous`, the caller of a
 * host without tokens. A transaction belongs to the caller that created it; only that caller reads or extends it.
 */
export interface CallerContext {
  caller?: string;
}

/** What {@link AcpReceiver.ingest} needs to know about the channel and the caller. */
export interface IngestContext extends CallerContext {
  /** Whether the envelope arrived over TLS (personal data travels only over TLS). */
  secure: boolean;
}

/** The transport-free receiving side of ACPspec. */
export interface AcpReceiver {
  /**
   * Validates and ingests one envelope (pipeline in docs/acpspec-core.md).
   * @throws AcpError with the code of the first rule the envelope breaks; `ACP_POLICY_VIOLATION` for a
   *   transaction another caller created.
   */
  ingest(envelope: unknown, context: IngestContext): Promise<AcpAck>;
  /**
   * The current materialised state snapshot and its canonical bytes.
   * @throws `ACP_TRANSACTION_UNKNOWN` (also for another caller's transaction).
   */
  state(
    transactionId: string,
    options?: CallerContext,
  ): Promise<{ envelope: SnapshotEnvelope; bytes: Buffer }>;
  /**
   * A page of the caller's own transactions in id order, after the transaction id `after` (default: from
   * the start), at most `limit` (default 100, at most 1000); `next` names the last one when the page is full.
   */
  transactions(options?: TransactionPage): Promise<{ transactions: TransactionSummary[]; next?: string }>;
  /** A page of the event stream after `after` (default 0). @throws `ACP_TRANSACTION_UNKNOWN`. */
  events(
    transactionId: string,
    options?: CallerContext & { after?: number; limit?: number },
  ): Promise<{ events: AcpEvent[]; next?: number }>;
  /**
   * Follows the stream: reads the store whenever it reports a commit of the transaction (every host's on
   * PostgreSQL) and at least every `pollMs` (default 250), so it sees events written by any process. Ends
   * quietly when `signal` aborts. @throws `ACP_TRANSACTION_UNKNOWN` on the first step.
   */
  follow(
    transactionId: string,
    options: CallerContext & { after?: number; signal: AbortSignal; pollMs?: number },
  ): AsyncIterable<AcpEvent & { seq: number }>;
}

const MAX_PAGE = 1000;
/** Commits tried per ingest before a moving head is reported as ACP_ENVELOPE_CONFLICT (docs "decision b"). */
const COMMIT_ATTEMPTS = 3;
const DEFAULT_CACHE_BYTES = 128 * 1024 * 1024;

/** Creates the receiver over a {@link TransactionStore}. */
export function createAcpReceiver(options: AcpReceiverOptions): AcpReceiver {
  return new StoreBackedReceiver(options);
}

/**
 * The receiver over a {@link TransactionStore}. Each step of the ingest pipeline (docs/acpspec-core.md) is a
 * method: admit, the optimistic attempt, the checked pipeline with its replay check, and the transition and
 * commit ({@link TransitionCommitter}).
 */
export class StoreBackedReceiver implements AcpReceiver {
  private readonly store: TransactionStore;
  private readonly accepts: readonly Kind[];
  private readonly versions: readonly string[];
  private readonly logger: Logger;
  private readonly metrics: Metrics;
  private readonly cache: HeldStateCache;
  /** Canonical texts of state subtrees by identity (states are never mutated). */
  private readonly memo = new WeakMap<object, string>();
  private readonly commits: TransitionCommitter;

  constructor(options: AcpReceiverOptions) {
    this.store = options.store;
    this.accepts = options.accepts;
    this.versions = options.acceptedVersions ?? ACP_DEFAULT_ACCEPTED_VERSIONS;
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics ?? NO_METRICS;
    this.cache = createHeldStateCache(options.stateCacheBytes ?? DEFAULT_CACHE_BYTES);
    this.commits = new TransitionCommitter({
      store: options.store,
      cache: this.cache,
      clock: options.clock ?? systemClock,
      ids: options.ids,
      receiverAgentId: options.receiverAgentId,
      header: { acp_version: ACP_VERSION, producer: options.producer },
      memo: this.memo,
      metrics: this.metrics,
    });
  }

  async ingest(raw: unknown, context: IngestContext): Promise<AcpAck> {
    const started = performance.now();
    const kind = kindLabel(raw);
    try {
      const ack = await this.ingestOnce(raw, context);
      this.metrics.acpEnvelope(kind, undefined, (performance.now() - started) / 1000);
      return ack;
    } catch (error) {
      const code = isAcpError(error) ? error.code : 'ACP_INTERNAL';
      this.metrics.acpEnvelope(kind, code, (performance.now() - started) / 1000);
      throw error;
    }
  }

  private async ingestOnce(raw: unknown, context: IngestContext): Promise<AcpAck> {
    const envelope = parseEnvelope(raw);
    try {
      const inbound = this.admit(envelope, context);
      const ack = (await this.optimistic(inbound)) ?? (await this.checked(inbound));
      this.logger.debug('acp.ingest', { envelope_id: ack.envelope_id, transaction_id: ack.transaction_id });
      return ack;
    } catch (error) {
      this.logger.info('acp.ingest.rejected', { envelope_id: envelope.envelope_id, ...errorFields(error) });
      if (isAcpError(error)) {
        error.ids = { envelope_id: envelope.envelope_id, transaction_id: envelope.transaction_id };
        throw error;
      }
      throw new AcpError('ACP_INTERNAL', undefined, { cause: error });
    }
  }

  async state(
    transactionId: string,
    read?: CallerContext,
  ): Promise<{ envelope: SnapshotEnvelope; bytes: Buffer }> {
    const held = await this.heldFor(await this.requireHead(transactionId, read?.caller));
    const meta = {
      envelopeId: held.head.stateEnvelopeId,
      transactionId,
      producedAt: held.head.stateProducedAt,
    };
    const body = stateBodyOf(held.header, held.state);
    const text = composeStateText({ meta, body, eventTexts: heldEventTexts(held) }, this.memo);
    return { envelope: composeSnapshot(meta, body, held.state.events), bytes: Buffer.from(text, 'utf8') };
  }

  transactions(page?: TransactionPage): Promise<{ transactions: TransactionSummary[]; next?: string }> {
    return transactionPage(this.store, page);
  }

  async events(
    transactionId: string,
    page?: CallerContext & { after?: number; limit?: number },
  ): Promise<{ events: AcpEvent[]; next?: number }> {
    await this.requireHead(transactionId, page?.caller);
    const limit = Math.min(Math.max(page?.limit ?? 100, 1), MAX_PAGE);
    const rows = await this.store.events(transactionId, { after: page?.after ?? 0, limit });
    const last = rows[rows.length - 1];
    return {
      events: rows.map((r) => r.event),
      ...(rows.length === limit && last ? { next: last.seq } : {}),
    };
  }

  async *follow(
    transactionId: string,
    options: CallerContext & { after?: number; signal: AbortSignal; pollMs?: number },
  ): AsyncGenerator<AcpEvent & { seq: number }> {
    await this.requireHead(transactionId, options.caller);
    yield* followEvents(this.store, transactionId, options);
  }

  /**
   * The checks before any read: version, kind, patch policy and TLS for personal data; then the envelope as
   * the pipeline reads it (its canonical text, the caller).
   */
  private admit(envelope: Envelope, context: IngestContext): Inbound {
    if (!this.versions.includes(envelope.acp_version)) {
      throw new AcpError('ACP_VERSION_UNSUPPORTED', undefined, { details: { accepted: [...this.versions] } });
    }
    const kind = envelopeKind(envelope);
    if (!this.accepts.includes(kind)) {
      throw new AcpError('ACP_KIND_NOT_ACCEPTED', undefined, {
        details: { kind, accepts: [...this.accepts] },
      });
    }
    if (isDelta(envelope)) assertPatchPolicy(envelope.patch);
    if (!context.secure && containsPersonalData(envelope)) throw new AcpError('ACP_TRANSPORT_INSECURE');
    return { envelope, kind, text: canonicalJson(envelope), caller: context.caller ?? ANONYMOUS_IDENTITY };
  }

  /**
   * The common case without a read (docs/acpspec-core.md "Ingest path"): on the state this receiver holds for the transaction (or, for
   * a snapshot, on no transaction), compute and commit at once. The store's compare-and-set and its id
   * registry refuse the commit if another writer moved the head or the id is taken; any refusal, and any
   * error of the transition, hands over to {@link checked}, which reads the store and answers exactly as if
   * this attempt had not happened — a replay still gets its ack, a stale parent its conflict.
   */
  private async optimistic(inbound: Inbound): Promise<AcpAck | undefined> {
    const { envelope } = inbound;
    const held = this.cache.get(envelope.transaction_id);
    if (held === undefined ? isDelta(envelope) : held.head.owner !== inbound.caller) return undefined;
    let transition: ReturnType<TransitionCommitter['transitionOn']>;
    try {
      transition = this.commits.transitionOn(envelope, held);
    } catch (error) {
      if (isAcpError(error)) return undefined;
      throw error;
    }
    return 'parentMismatch' in transition ? undefined : this.commits.commit(inbound, held, transition);
  }

  /** The full pipeline on the store's head: replay check, owner, transition, commit (docs "decision b"). */
  private async checked(inbound: Inbound): Promise<AcpAck> {
    const { envelope } = inbound;
    for (let attempt = 1; ; attempt++) {
      // The head is read before the replay check: a head that moved past this envelope's parent because
      // another host stored this very envelope means the replay check below sees it (one commit writes both).
      // The state read may be newer than `head`; its own head was still read before the replay check.
      const read = await this.store.head(envelope.transaction_id);
      const held = read === undefined ? undefined : await this.heldFor(read);
      const replay = await this.replayAck(inbound, held?.head);
      if (replay) return replay;
      assertOwner(held?.head, inbound.caller);
      const transition = this.commits.transitionOn(envelope, held);
      if ('parentMismatch' in transition) throw await this.parentRefusal(inbound, transition, held);
      const ack = await this.commits.commit(inbound, held, transition);
      if (ack) return ack;
      // Another writer moved the head or stored this id between our reads and our commit. It may have
      // stored this very envelope (the same delta sent to two hosts at once): docs/acpspec-core.md "Deltas" makes that a
      // replay, never a conflict, so start over from the replay check. A delta whose parent is no longer
      // the head then gets ACP_ENVELOPE_CONFLICT; a snapshot is recomputed.
      if (attempt >= COMMIT_ATTEMPTS) {
        throw new AcpError('ACP_ENVELOPE_CONFLICT', 'transaction head moved', {
          details: headDetails(await this.store.head(envelope.transaction_id)),
        });
      }
    }
  }

  /** A delta's parent that is not the head: superseded (`ACP_ENVELOPE_CONFLICT`) or never seen. */
  private async parentRefusal(
    inbound: Inbound,
    { parentMismatch }: ParentMismatch,
    held: HeldState | undefined,
  ): Promise<AcpError> {
    if (await this.store.isKnownEnvelope(inbound.envelope.transaction_id, parentMismatch)) {
      return new AcpError('ACP_ENVELOPE_CONFLICT', 'parent is not the transaction head', {
        details: headDetails(held?.head),
      });
    }
    return new AcpError('ACP_PARENT_UNKNOWN');
  }

  /**
   * The original ack when this envelope id is stored with the same canonical bytes (docs/acpspec-core.md "Deltas").
   * Envelope ids are unique across the store (docs/acpspec-core.md): an id already used for another envelope — other
   * bytes, or a state snapshot this receiver minted, in any transaction — is `ACP_ENVELOPE_CONFLICT`.
   */
  private async replayAck(inbound: Inbound, head: TransactionHead | undefined): Promise<AcpAck | undefined> {
    const use = await this.store.findEnvelopeId(inbound.envelope.envelope_id);
    if (use === undefined) return undefined;
    if (use.role === 'state')
      throw new AcpError('ACP_ENVELOPE_CONFLICT', 'envelope id already names another envelope');
    const stored = use.envelope;
    assertOwner(
      stored.transactionId === head?.transactionId ? head : await this.store.head(stored.transactionId),
      inbound.caller,
    );
    if (stored.text !== inbound.text)
      throw new AcpError('ACP_ENVELOPE_CONFLICT', 'envelope id already used with other content');
    return {
      envelope_id: stored.envelopeId,
      transaction_id: stored.transactionId,
      state_envelope_id: stored.stateEnvelopeId,
    };
  }

  /** The held state as of `head`: this receiver's own when it is that version, else read from the store. */
  private async heldFor(head: TransactionHead): Promise<HeldState> {
    const cached = this.cache.get(head.transactionId);
    if (
      cached &&
      cached.head.version === head.version &&
      cached.head.stateEnvelopeId === head.stateEnvelopeId
    ) {
      return cached.head === head ? cached : { ...cached, head };
    }
    const stored = await this.store.state(head.transactionId);
    if (stored === undefined) throw new LocalError('INVALID_STATE', 'a transaction head without its state');
    const { acp_version, producer, ...objects } = stored.body;
    const held: HeldState = {
      head: stored.head,
      header: { acp_version, producer },
      state: { ...objects, events: stored.events },
      eventTexts: stored.eventTexts,
      eventBytes: stored.eventTexts.reduce((sum, text) => sum + text.length, 0),
    };
    this.cache.set(held);
    return held;
  }

  /** A transaction of another caller is reported exactly as one that does not exist (A2A §3.3.2). */
  private async requireHead(transactionId: string, caller: string | undefined): Promise<TransactionHead> {
    // An id outside the schema's shape names no transaction; the store never sees it (PostgreSQL would
    // refuse U+0000 or an over-long value with an error, SQLite would simply find nothing).
    if (!isAcpId(transactionId)) throw new AcpError('ACP_TRANSACTION_UNKNOWN');
    const head = await this.store.head(transactionId);
    if (head === undefined || head.owner !== (caller ?? ANONYMOUS_IDENTITY)) {
      throw new AcpError('ACP_TRANSACTION_UNKNOWN', undefined, { ids: { transaction_id: transactionId } });
    }
    return head;
  }
}

/**
 * Ingest into another caller's transaction is refused (its content is never read or changed); the refusal
 * names no detail of it.
 */
function assertOwner(head: TransactionHead | undefined, caller: string): void {
  if (head !== undefined && head.owner !== caller) {
    throw new AcpError('ACP_POLICY_VIOLATION', 'transaction_id belongs to another agent');
  }
}

function headDetails(head: TransactionHead | undefined): Record<string, string> | undefined {
  return head
    ? { head_envelope_id: head.headEnvelopeId, state_envelope_id: head.stateEnvelopeId }
    : undefined;
}

import type { Clock } from '../shared/clock.js';
import type { IdSource } from '../shared/ids.js';
import { canonicalJson } from '../shared/jcs.js';
import type { Metrics } from '../shared/metrics.js';
import { ACP_EVENT_TYPES, type Kind } from './constants.js';
import type { ConsentEventDraft } from './consent.js';
import {
  buildSnapshot,
  isDelta,
  newEnvelopeId,
  type AcpAck,
  type AcpEvent,
  type AcpState,
  type Envelope,
  type Producer,
  type SnapshotEnvelope,
} from './envelope.js';
import { AcpError } from './errors.js';
import type { HeldState, HeldStateCache } from './held-state.js';
import { deltaTransition, snapshotTransition, type Transition } from './materialise.js';
import { encodeStateBody, sameBodyObjects, stateBodyOf } from './state-body.js';
import { appendEvents } from './stream.js';
import type { IngestCommit, TransactionStore } from './transaction-store.js';

/** What committing a transition needs from the receiver. */
export interface CommitContext {
  store: TransactionStore;
  cache: HeldStateCache;
  clock: Clock;
  ids: IdSource | undefined;
  receiverAgentId: string;
  /** Header fields of the receiver's state snapshots. */
  header: { acp_version: string; producer: Producer };
  /** Canonical texts of state subtrees by identity (states are never mutated). */
  memo: WeakMap<object, string>;
  /** Counts the consent conflicts a commit recorded (docs/operations.md "Metrics"); absent: none. */
  metrics?: Metrics;
}

/** The inbound envelope as the pipeline has read it. */
export interface Inbound {
  envelope: Envelope;
  kind: Kind;
  /** Its canonical text. */
  text: string;
  caller: string;
}

/** A delta whose parent is neither the held head nor its state snapshot. */
export interface ParentMismatch {
  parentMismatch: string;
}

/** What one commit writes, computed before it is tried. */
interface PreparedCommit {
  /** The held state the commit builds on (undefined: it creates the transaction). */
  held: HeldState | undefined;
  /** The receiver's state snapshot after the envelope (its id and `produced_at` name the new state). */
  snapshot: SnapshotEnvelope;
  /** The new state, the receiver's own events added. */
  state: AcpState;
  /** The events the commit appends (inbound ones, then the receiver's own), with their canonical texts. */
  added: { eventId: string; text: string }[];
}

/**
 * The last steps of ingest (docs/acpspec-core.md): the transition of an envelope on the held state, and its
 * commit to the store on top of that state.
 */
export class TransitionCommitter {
  private readonly idOptions: { clock: Clock; ids?: IdSource };

  constructor(private readonly context: CommitContext) {
    this.idOptions = { clock: context.clock, ...(context.ids ? { ids: context.ids } : {}) };
  }

  /**
   * The transition of `envelope` on the held state (undefined: the transaction does not exist yet), or
   * a {@link ParentMismatch} when a delta's parent is neither the head nor its state snapshot (the caller
   * tells an unknown parent from a superseded one).
   * @throws AcpError as {@link snapshotTransition} / {@link deltaTransition}; `ACP_PARENT_UNKNOWN` for a
   *   delta on a transaction that does not exist.
   */
  transitionOn(envelope: Envelope, held: HeldState | undefined): Transition | ParentMismatch {
    const context = { receiverAgentId: this.context.receiverAgentId, nowMs: this.context.clock.now() };
    if (!isDelta(envelope)) return snapshotTransition(held?.state, envelope, context);
    if (held === undefined) throw new AcpError('ACP_PARENT_UNKNOWN');
    const parent = envelope.parent_envelope_id;
    if (parent !== held.head.headEnvelopeId && parent !== held.head.stateEnvelopeId)
      return { parentMismatch: parent };
    return deltaTransition(held.state, envelope, context);
  }

  /**
   * Materialises the state after `transition` (the receiver's own events added) and commits it on top of
   * `held`: the envelope, the new head, the events, and the state body only when it changed. On success the
   * new state is cached and the ack returned; undefined when the store refused (stale or duplicate).
   */
  async commit(
    inbound: Inbound,
    held: HeldState | undefined,
    transition: Transition,
  ): Promise<AcpAck | undefined> {
    const prepared = this.prepare(inbound, held, transition);
    const result = await this.context.store.commit(this.ingestCommit(inbound, prepared));
    if (!result.ok) return undefined;
    this.remember(inbound, prepared, result.version);
    // Counted once committed: a commit that lost its race records nothing, its retry counts.
    for (const draft of transition.drafts)
      if (draft.type === ACP_EVENT_TYPES.consentConflict)
        this.context.metrics?.acpConsentConflict(String(draft.data.scope));
    return {
      envelope_id: inbound.envelope.envelope_id,
      transaction_id: inbound.envelope.transaction_id,
      state_envelope_id: prepared.snapshot.envelope_id,
    };
  }

  /** The new state snapshot's id and time, the state with the receiver's own events, and what is appended. */
  private prepare(inbound: Inbound, held: HeldState | undefined, transition: Transition): PreparedCommit {
    const snapshot = buildSnapshot(
      {
        transaction_id: inbound.envelope.transaction_id,
        producer: this.context.header.producer,
        state: transition.state,
      },
      this.idOptions,
    );
    const own = this.ownEvents(transition.drafts, snapshot.produced_at);
    const state: AcpState =
      own.length === 0
        ? transition.state
        : { ...transition.state, events: appendEvents(transition.state.events, own) };
    const added = [...transition.appended, ...own].map((event) => ({
      eventId: event.event_id,
      text: canonicalJson(event),
    }));
    return { held, snapshot, state, added };
  }

  /** The events the receiver adds itself (consent outcomes), produced at the new state's time. */
  private ownEvents(drafts: readonly ConsentEventDraft[], producedAt: string): AcpEvent[] {
    return drafts.map((draft) => ({
      event_id: newEnvelopeId(this.idOptions),
      type: draft.type,
      occurred_at: producedAt,
      actor: this.context.receiverAgentId,
      subject: draft.subject,
      data: draft.data,
    }));
  }

  /** What the store writes, all or nothing: the state body only when it changed (docs/acpspec-core.md "Ingest path"). */
  private ingestCommit(inbound: Inbound, { held, snapshot, state, added }: PreparedCommit): IngestCommit {
    const { envelope } = inbound;
    const bodyChanged =
      held === undefined ||
      !isDelta(envelope) ||
      !sameBodyObjects(held.state, state) ||
      !sameHeader(held.header, this.context.header);
    return {
      transactionId: envelope.transaction_id,
      expectedVersion: held?.head.version ?? 0,
      owner: inbound.caller,
      envelope: {
        envelopeId: envelope.envelope_id,
        kind: inbound.kind,
        parentEnvelopeId: envelope.parent_envelope_id,
        text: inbound.text,
        receivedAt: snapshot.produced_at,
      },
      state: {
        envelopeId: snapshot.envelope_id,
        body: bodyChanged
          ? encodeStateBody(stateBodyOf(this.context.header, state), this.context.memo)
          : undefined,
      },
      events: added,
      firstSeq: (held?.head.eventCount ?? 0) + 1,
    };
  }

  /** Caches the committed state as of the store's new `version`. */
  private remember(
    inbound: Inbound,
    { held, snapshot, state, added }: PreparedCommit,
    version: number,
  ): void {
    const texts = added.map((event) => event.text);
    this.context.cache.set({
      head: {
        transactionId: inbound.envelope.transaction_id,
        version,
        headEnvelopeId: inbound.envelope.envelope_id,
        stateEnvelopeId: snapshot.envelope_id,
        stateProducedAt: snapshot.produced_at,
        eventCount: state.events.length,
        owner: held?.head.owner ?? inbound.caller,
      },
      header: this.context.header,
      state,
      eventTexts: grownTexts(held, texts),
      eventBytes: (held?.eventBytes ?? 0) + texts.reduce((sum, text) => sum + text.length, 0),
    });
  }
}

/**
 * The event texts after a commit. The held array is grown in place when this commit extends its latest
 * version (a held state reads only its first `eventCount` texts, see {@link heldEventTexts}), so appending
 * does not copy the stream; a version that lost a race is copied.
 */
function grownTexts(held: HeldState | undefined, texts: string[]): string[] {
  if (held === undefined) return texts;
  if (held.eventTexts.length !== held.head.eventCount) return [...heldEventTexts(held), ...texts];
  held.eventTexts.push(...texts);
  return held.eventTexts;
}

/** The canonical texts of a held state's events (its array may have grown for a later version). */
export function heldEventTexts(held: HeldState): readonly string[] {
  return held.eventTexts.length === held.head.eventCount
    ? held.eventTexts
    : held.eventTexts.slice(0, held.head.eventCount);
}

function sameHeader(a: HeldState['header'], b: HeldState['header']): boolean {
  return (
    a === b || (a.acp_version === b.acp_version && canonicalJson(a.producer) === canonicalJson(b.producer))
  );
}

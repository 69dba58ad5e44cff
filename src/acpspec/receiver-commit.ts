import type { Clock } from '../shared/clock.js';
import type { IdSource } from '../shared/ids.js';
import { canonicalJson } from '../shared/jcs.js';
import type { Kind } from './constants.js';
import {
  buildSnapshot,
  isDelta,
  newEnvelopeId,
  type AcpAck,
  type AcpEvent,
  type AcpState,
  type Envelope,
  type Producer,
} from './envelope.js';
import { AcpError } from './errors.js';
import type { HeldState, HeldStateCache } from './held-state.js';
import { deltaTransition, snapshotTransition, type Transition } from './materialise.js';
import { encodeStateBody, sameBodyObjects, stateBodyOf } from './state-body.js';
import { appendEvents } from './stream.js';
import type { TransactionStore } from './transaction-store.js';

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
}

/** The inbound envelope as the pipeline has read it. */
export interface Inbound {
  kind: Kind;
  /** Its canonical text. */
  text: string;
  caller: string;
}

/** A delta whose parent is neither the held head nor its state snapshot. */
export interface ParentMismatch {
  parentMismatch: string;
}

/**
 * The transition of `envelope` on the held state (undefined: the transaction does not exist yet), or
 * a {@link ParentMismatch} when a delta's parent is neither the head nor its state snapshot (the caller tells
 * an unknown parent from a superseded one).
 * @throws AcpError as {@link snapshotTransition} / {@link deltaTransition}; `ACP_PARENT_UNKNOWN` for a delta
 *   on a transaction that does not exist.
 */
export function transitionOn(
  envelope: Envelope,
  held: HeldState | undefined,
  context: CommitContext,
): Transition | ParentMismatch {
  const transition = { receiverAgentId: context.receiverAgentId, nowMs: context.clock.now() };
  if (!isDelta(envelope)) return snapshotTransition(held?.state, envelope, transition);
  if (held === undefined) throw new AcpError('ACP_PARENT_UNKNOWN');
  const parent = envelope.parent_envelope_id;
  if (parent !== held.head.headEnvelopeId && parent !== held.head.stateEnvelopeId)
    return { parentMismatch: parent };
  return deltaTransition(held.state, envelope, transition);
}

/**
 * Materialises the state after `transition` (the receiver's own events added) and commits it on top of
 * `held`: the envelope, the new head, the events, and the state body only when it changed. On success the
 * new state is cached and the ack returned; undefined when the store refused (stale or duplicate).
 */
export async function commitTransition(
  envelope: Envelope,
  held: HeldState | undefined,
  transition: Transition,
  inbound: Inbound,
  context: CommitContext,
): Promise<AcpAck | undefined> {
  const idOptions = { clock: context.clock, ...(context.ids ? { ids: context.ids } : {}) };
  const snapshot = buildSnapshot(
    { transaction_id: envelope.transaction_id, producer: context.header.producer, state: transition.state },
    idOptions,
  );
  const own: AcpEvent[] = transition.drafts.map((draft) => ({
    event_id: newEnvelopeId(idOptions),
    type: draft.type,
    occurred_at: snapshot.produced_at,
    actor: context.receiverAgentId,
    subject: draft.subject,
    data: draft.data,
  }));
  const state: AcpState =
    own.length === 0
      ? transition.state
      : { ...transition.state, events: appendEvents(transition.state.events, own) };
  const added = [...transition.appended, ...own].map((event) => ({
    eventId: event.event_id,
    text: canonicalJson(event),
  }));
  const bodyChanged =
    held === undefined ||
    !isDelta(envelope) ||
    !sameBodyObjects(held.state, state) ||
    !sameHeader(held.header, context.header);
  const result = await context.store.commit({
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
      body: bodyChanged ? encodeStateBody(stateBodyOf(context.header, state), context.memo) : undefined,
    },
    events: added,
    firstSeq: (held?.head.eventCount ?? 0) + 1,
  });
  if (!result.ok) return undefined;
  const texts = added.map((event) => event.text);
  context.cache.set({
    head: {
      transactionId: envelope.transaction_id,
      version: result.version,
      headEnvelopeId: envelope.envelope_id,
      stateEnvelopeId: snapshot.envelope_id,
      stateProducedAt: snapshot.produced_at,
      eventCount: state.events.length,
      owner: held?.head.owner ?? inbound.caller,
    },
    header: context.header,
    state,
    eventTexts: grownTexts(held, texts),
    eventBytes: (held?.eventBytes ?? 0) + texts.reduce((sum, text) => sum + text.length, 0),
  });
  return {
    envelope_id: envelope.envelope_id,
    transaction_id: envelope.transaction_id,
    state_envelope_id: snapshot.envelope_id,
  };
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

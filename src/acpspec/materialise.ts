import { mergeConsent, requireConsent, type ConsentEventDraft } from './consent.js';
import { applyDelta } from './delta.js';
import {
  stateOf,
  type AcpEvent,
  type AcpState,
  type DeltaEnvelope,
  type SnapshotEnvelope,
} from './envelope.js';
import { findPersonalData, personalDataAffectedBy, subjectsOf } from './pii.js';
import { mergeEvents } from './stream.js';

/** What ingesting one envelope does to a transaction's state. */
export interface Transition {
  /** The new materialised state (consent merged, events grown). */
  state: AcpState;
  /** Inbound events the held stream did not have, in order. */
  appended: AcpEvent[];
  /** Events the receiver must add itself (consent outcomes). */
  drafts: ConsentEventDraft[];
}

/** Context of a transition. */
export interface TransitionContext {
  receiverAgentId: string;
  nowMs: number;
}

/**
 * A snapshot's transition: its objects replace the held ones, except that consent is merged by the
 * lattice and the held event stream is kept and grown (docs/acpspec-core.md "Consent", seed "Append to the event
 * stream"). Consent is enforced on every personal-data value the snapshot carries.
 * @throws AcpError `ACP_CONSENT_REQUIRED`, `ACP_POLICY_VIOLATION` (event rewritten).
 */
export function snapshotTransition(
  held: AcpState | undefined,
  snapshot: SnapshotEnvelope,
  context: TransitionContext,
): Transition {
  const inbound = stateOf(snapshot);
  const consent = mergeConsent(held?.consent, inbound.consent, {
    envelopeId: snapshot.envelope_id,
    nowMs: context.nowMs,
  });
  requireConsent(consent.consent, subjectsOf(findPersonalData(inbound), inbound), context);
  const stream = mergeEvents(held?.events ?? [], inbound.events);
  return {
    state: { ...inbound, consent: consent.consent, events: stream.events },
    appended: stream.appended,
    drafts: consent.events,
  };
}

/**
 * A delta's transition: the patch is applied to the held state (which the caller has checked is the
 * parent's), the result validated, consent merged against the held records and enforced, on the
 * resulting state, for the personal data the patch writes or hands to another party (docs/acpspec-core.md "Consent").
 * @throws AcpError `ACP_POLICY_VIOLATION`, `ACP_PATCH_FAILED`, `ACP_CONSENT_REQUIRED`.
 */
export function deltaTransition(
  held: AcpState,
  delta: DeltaEnvelope,
  context: TransitionContext,
): Transition {
  const result = applyDelta(held, delta);
  // The policy allows only appends at /events/-, so the held prefix is unchanged.
  const stream = mergeEvents(held.events, result.events.slice(held.events.length), result.events);
  const consent = mergeConsent(held.consent, result.consent, {
    envelopeId: delta.envelope_id,
    nowMs: context.nowMs,
  });
  requireConsent(consent.consent, subjectsOf(personalDataAffectedBy(delta.patch, result), result), context);
  return {
    state: { ...result, consent: consent.consent, events: stream.events },
    appended: stream.appended,
    drafts: consent.events,
  };
}

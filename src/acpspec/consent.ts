import { ACP_CONSENT_SCOPES, ACP_CONSENT_STATES, ACP_EVENT_TYPES, type ConsentScope, type ConsentState } from './constants.js';
import type { ConsentMap, ConsentRecord } from './envelope.js';
import { AcpError } from './errors.js';
import type { PersonalDataSubjects } from './pii.js';

/** Position in the lattice `revoked < denied < unknown < limited < granted` (design "Consent"). */
export function consentRank(state: ConsentState): number {
  return ACP_CONSENT_STATES.indexOf(state);
}

/** Whether a record carries the evidence that lets it establish consent when nothing is held. */
export function hasConsentEvidence(record: ConsentRecord): boolean {
  return (
    record.captured_at !== undefined &&
    record.captured_by !== undefined &&
    record.method !== undefined &&
    record.consent_text !== undefined
  );
}

/** How one (party, scope) pair was merged. */
export type ConsentOutcome =
  | 'none' // nothing held, nothing asserted
  | 'kept' // held kept: asserted absent or equal
  | 'lowered' // asserted is lower: accepted
  | 'conflict' // asserted tries to raise: held kept, disagreement recorded
  | 'established' // nothing held, evidenced grant: accepted
  | 'recorded' // nothing held, asserted at most `unknown`: accepted
  | 'unestablished'; // nothing held, grant without evidence: nothing held still, disagreement recorded

/** Result of merging one (party, scope) pair. */
export interface ConsentRecordMerge {
  record: ConsentRecord | undefined;
  outcome: ConsentOutcome;
}

/**
 * Merges an inbound assertion into the held record. The held state wins over a raise; a lowering is
 * accepted; when nothing is held, an evidenced grant establishes the record (design "Consent").
 * An equal state keeps the held record (details such as `granted_to` cannot widen it that way).
 */
export function mergeConsentRecord(held: ConsentRecord | undefined, asserted: ConsentRecord | undefined): ConsentRecordMerge {
  if (asserted === undefined) return { record: held, outcome: held === undefined ? 'none' : 'kept' };
  if (held === undefined) {
    if (consentRank(asserted.state) <= consentRank('unknown')) return { record: asserted, outcome: 'recorded' };
    return hasConsentEvidence(asserted)
      ? { record: asserted, outcome: 'established' }
      : { record: undefined, outcome: 'unestablished' };
  }
  const delta = consentRank(asserted.state) - consentRank(held.state);
  if (delta > 0) return { record: held, outcome: 'conflict' };
  if (delta < 0) return { record: asserted, outcome: 'lowered' };
  return { record: held, outcome: 'kept' };
}

/** An event the merge asks the receiver to append (ids and times are added by the caller). */
export interface ConsentEventDraft {
  type: string;
  subject: string;
  data: Record<string, unknown>;
}

/** Result of {@link mergeConsent}. */
export interface ConsentMerge {
  consent: ConsentMap;
  events: ConsentEventDraft[];
}

/**
 * Merges an inbound consent map into the held one, pair by pair, and drafts the events the design asks
 * for: `consent.conflict` {held, asserted, envelope_id} when a raise is refused (held `null` when nothing
 * is held and the grant lacks evidence), `consent.established` for an evidenced first grant, and
 * `consent.lowered` so a revocation is visible in the stream too.
 */
export function mergeConsent(held: ConsentMap | undefined, asserted: ConsentMap | undefined, envelopeId: string): ConsentMerge {
  const consent: ConsentMap = {};
  const events: ConsentEventDraft[] = [];
  const parties = new Set([...Object.keys(held ?? {}), ...Object.keys(asserted ?? {})]);
  for (const party of parties) {
    const merged: Partial<Record<ConsentScope, ConsentRecord>> = {};
    for (const scope of ACP_CONSENT_SCOPES) {
      const h = held?.[party]?.[scope];
      const a = asserted?.[party]?.[scope];
      const { record, outcome } = mergeConsentRecord(h, a);
      if (record !== undefined) merged[scope] = record;
      const event = eventFor(outcome, h, a, envelopeId);
      if (event) events.push({ ...event, subject: `/consent/${escape(party)}/${scope}`, data: { ...event.data, party_id: party, scope } });
    }
    if (Object.keys(merged).length > 0) consent[party] = merged;
  }
  return { consent, events };
}

function eventFor(
  outcome: ConsentOutcome,
  held: ConsentRecord | undefined,
  asserted: ConsentRecord | undefined,
  envelopeId: string,
): { type: string; data: Record<string, unknown> } | undefined {
  const data = { held: held?.state ?? null, asserted: asserted?.state ?? null, envelope_id: envelopeId };
  switch (outcome) {
    case 'conflict':
    case 'unestablished':
      return { type: ACP_EVENT_TYPES.consentConflict, data };
    case 'established':
      return { type: ACP_EVENT_TYPES.consentEstablished, data };
    case 'lowered':
      return { type: ACP_EVENT_TYPES.consentLowered, data };
    case 'none':
    case 'kept':
    case 'recorded':
      return undefined;
  }
}

function escape(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The state to enforce: an expired record counts as `unknown`. */
export function effectiveConsent(record: ConsentRecord | undefined, nowMs: number): ConsentState | undefined {
  if (record === undefined) return undefined;
  if (record.expires_at !== undefined && Date.parse(record.expires_at) <= nowMs) {
    return consentRank(record.state) > consentRank('unknown') ? 'unknown' : record.state;
  }
  return record.state;
}

/** One unmet consent requirement (ids and states only; safe for the wire). */
export interface ConsentShortfall {
  party_id: string;
  scope: ConsentScope;
  required: ConsentState;
  held: ConsentState | null;
}

/**
 * Lists the unmet requirements for receiving the personal data of `subjects`: each needs `data_sharing`
 * at least `limited` and, when `granted_to` is set, naming the receiver; credit data additionally
 * needs `credit` (design "Consent").
 */
export function consentShortfalls(
  consent: ConsentMap,
  subjects: PersonalDataSubjects,
  context: { receiverAgentId: string; nowMs: number },
): ConsentShortfall[] {
  const shortfalls: ConsentShortfall[] = [];
  for (const [party, { credit }] of subjects) {
    const scopes: ConsentScope[] = credit ? ['data_sharing', 'credit'] : ['data_sharing'];
    for (const scope of scopes) {
      const record = consent[party]?.[scope];
      const state = effectiveConsent(record, context.nowMs);
      const permitted =
        state !== undefined &&
        consentRank(state) >= consentRank('limited') &&
        (record?.granted_to === undefined || record.granted_to.includes(context.receiverAgentId));
      if (!permitted) shortfalls.push({ party_id: party, scope, required: 'limited', held: state ?? null });
    }
  }
  return shortfalls;
}

/**
 * Enforces consent at the boundary (seed "Consent Survives the Hop").
 * @throws AcpError `ACP_CONSENT_REQUIRED` with `details.missing` listing every shortfall.
 */
export function requireConsent(
  consent: ConsentMap,
  subjects: PersonalDataSubjects,
  context: { receiverAgentId: string; nowMs: number },
): void {
  const missing = consentShortfalls(consent, subjects, context);
  if (missing.length > 0) throw new AcpError('ACP_CONSENT_REQUIRED', undefined, { missing });
}

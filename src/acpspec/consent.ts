import {
  consentRank,
  effectiveConsent,
  mergeConsentRecord,
  type ConsentRecordMerge,
} from './consent-record.js';
import { ACP_CONSENT_SCOPES, ACP_EVENT_TYPES, type ConsentScope, type ConsentState } from './constants.js';
import type { ConsentMap, ConsentRecord } from './envelope.js';
import { AcpError } from './errors.js';
import type { PersonalDataSubjects } from './pii.js';

/** An event the merge asks the receiver to append (ids and times are added by the caller). */
export interface ConsentEventDraft {
  type: string;
  subject: string;
  data: Record<string, unknown>;
}

/** The envelope asserting a consent map, and when it is merged. */
export interface ConsentAssertion {
  /** The asserting envelope's id, named in the events drafted. */
  envelopeId: string;
  nowMs: number;
}

/** Result of {@link mergeConsent}. */
export interface ConsentMerge {
  consent: ConsentMap;
  events: ConsentEventDraft[];
}

/**
 * Merges an inbound consent map into the held one, pair by pair ({@link mergeConsentRecord}), and drafts
 * the events the design asks for: `consent.conflict` {held, asserted, envelope_id, widened} when a
 * widening is refused (held `null` when nothing is held and the grant lacks evidence),
 * `consent.established` for an evidenced first grant, and `consent.lowered` {…, narrowed} so a
 * revocation or any other narrowing is visible in the stream too.
 */
export function mergeConsent(
  held: ConsentMap | undefined,
  asserted: ConsentMap | undefined,
  { envelopeId, nowMs }: ConsentAssertion,
): ConsentMerge {
  // A delta that leaves /consent alone asserts the held map itself: every record is kept as it is (an
  // expired grant aside, whose re-assertion is a refused widening), so the map stays the same object and
  // the state body need not be written again (docs/acpspec-core.md "Ingest path").
  if (held !== undefined && asserted === held && keepsItself(held, nowMs))
    return { consent: held, events: [] };
  const consent: ConsentMap = {};
  const events: ConsentEventDraft[] = [];
  const parties = new Set([...Object.keys(held ?? {}), ...Object.keys(asserted ?? {})]);
  for (const party of parties) {
    const merged: Partial<Record<ConsentScope, ConsentRecord>> = {};
    for (const scope of ACP_CONSENT_SCOPES) {
      const h = held?.[party]?.[scope];
      const a = asserted?.[party]?.[scope];
      const merge = mergeConsentRecord(h, a, nowMs);
      if (merge.record !== undefined) merged[scope] = merge.record;
      const base = {
        held: h?.state ?? null,
        asserted: a?.state ?? null,
        envelope_id: envelopeId,
        party_id: party,
        scope,
      };
      for (const { type, data } of eventsFor(merge))
        events.push({ type, subject: `/consent/${escape(party)}/${scope}`, data: { ...base, ...data } });
    }
    if (Object.keys(merged).length > 0) consent[party] = merged;
  }
  return { consent, events };
}

/** Whether merging a map with itself gives the same records and no events (no expired grant, no empty party). */
function keepsItself(consent: ConsentMap, nowMs: number): boolean {
  return Object.values(consent).every((scopes) => {
    const records = ACP_CONSENT_SCOPES.map((scope) => scopes[scope]).filter((record) => record !== undefined);
    return records.length > 0 && records.every((record) => effectiveConsent(record, nowMs) === record.state);
  });
}

function eventsFor(merge: ConsentRecordMerge): { type: string; data: Record<string, unknown> }[] {
  if (merge.outcome === 'established') return [{ type: ACP_EVENT_TYPES.consentEstablished, data: {} }];
  const events: { type: string; data: Record<string, unknown> }[] = [];
  if (merge.narrowed.length > 0)
    events.push({ type: ACP_EVENT_TYPES.consentLowered, data: { narrowed: merge.narrowed } });
  if (merge.widened.length > 0)
    events.push({ type: ACP_EVENT_TYPES.consentConflict, data: { widened: merge.widened } });
  return events;
}

function escape(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
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
 * needs `credit` (docs/acpspec-core.md "Consent").
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
  if (missing.length > 0) throw new AcpError('ACP_CONSENT_REQUIRED', undefined, { details: { missing } });
}

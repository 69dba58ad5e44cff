import { ACP_CONSENT_STATES, type ConsentState } from './constants.js';
import type { ConsentRecord } from './envelope.js';

/** Position in the lattice `revoked < denied < unknown < limited < granted` (docs/acpspec-core.md "Consent"). */
export function consentRank(state: ConsentState): number {
  return ACP_CONSENT_STATES.indexOf(state);
}

/** Whether a state permits anything (`limited` or `granted`). */
function permits(state: ConsentState): boolean {
  return consentRank(state) > consentRank('unknown');
}

/** Whether a record carries the evidence that lets it establish consent when nothing is held. */
function hasConsentEvidence(record: ConsentRecord): boolean {
  return (
    record.captured_at !== undefined &&
    record.captured_by !== undefined &&
    record.method !== undefined &&
    record.consent_text !== undefined
  );
}

/** The state to enforce: an expired grant is no grant and counts as `unknown` (docs/acpspec-core.md "Consent"). */
export function effectiveConsent(record: ConsentRecord | undefined, nowMs: number): ConsentState | undefined {
  if (record === undefined) return undefined;
  if (record.expires_at !== undefined && Date.parse(record.expires_at) <= nowMs && permits(record.state))
    return 'unknown';
  return record.state;
}

/**
 * The parts of a consent record that "most restrictive wins" applies to one by one. `evidence` is
 * `captured_at`, `captured_by`, `method`, `consent_text` and `evidence_hash` together.
 */
export type ConsentDimension = 'state' | 'channels' | 'granted_to' | 'expires_at' | 'evidence';

/** How one (party, scope) pair was merged. */
export type ConsentOutcome =
  | 'none' // nothing held, nothing asserted
  | 'kept' // held kept unchanged: asserted absent, or narrowing nothing and widening nothing
  | 'lowered' // asserted narrowed at least one dimension and widened none: accepted
  | 'conflict' // asserted tried to widen a dimension: held kept there, disagreement recorded
  | 'established' // nothing held, evidenced grant: accepted
  | 'recorded' // nothing held, asserted at most `unknown`: accepted
  | 'unestablished'; // nothing held, grant without evidence: nothing held still, disagreement recorded

/** Result of merging one (party, scope) pair. */
export interface ConsentRecordMerge {
  record: ConsentRecord | undefined;
  outcome: ConsentOutcome;
  /** Dimensions the asserted record narrowed (accepted). */
  narrowed: ConsentDimension[];
  /** Dimensions the asserted record tried to widen (refused: the held value stays). */
  widened: ConsentDimension[];
}

const EVIDENCE_KEYS = ['captured_at', 'captured_by', 'method', 'consent_text', 'evidence_hash'] as const;

/**
 * Merges an inbound assertion into the held record (docs/acpspec-core.md "Consent": the receiver enforces the most
 * restrictive state it holds; docs/acpspec-core.md "Consent": that holds for the whole record, dimension by dimension). An
 * inbound record may narrow any dimension, never widen one:
 * - state: lower is accepted, higher is refused; an expired held grant counts as `unknown`, so no
 *   assertion revives it (a revocation of it is still a lowering);
 * - a refusal (`revoked|denied|unknown`) that lowers the state replaces the record: it permits nothing,
 *   so nothing of it can widen anything;
 * - otherwise `channels` and `granted_to` become the intersection (absent = unrestricted), `expires_at`
 *   the earlier (absent = never) and the evidence stays the held one: a permitting record keeps the
 *   evidence it was established with. An omitted dimension keeps the held value.
 * When nothing is held, an evidenced grant establishes the record; a refusal is recorded as asserted.
 */
export function mergeConsentRecord(
  held: ConsentRecord | undefined,
  asserted: ConsentRecord | undefined,
  nowMs: number,
): ConsentRecordMerge {
  if (asserted === undefined) return result(held, held === undefined ? 'none' : 'kept');
  if (held === undefined) {
    if (!permits(asserted.state)) return result(asserted, 'recorded');
    return hasConsentEvidence(asserted)
      ? result(asserted, 'established')
      : result(undefined, 'unestablished', { widened: ['state'] });
  }
  const heldRank = consentRank(effectiveConsent(held, nowMs) ?? held.state);
  const assertedRank = consentRank(asserted.state);
  if (assertedRank < heldRank && !permits(asserted.state))
    return result(asserted, 'lowered', { narrowed: ['state'] });
  if (assertedRank >= heldRank && heldRank <= consentRank('unknown')) {
    return assertedRank > heldRank ? result(held, 'conflict', { widened: ['state'] }) : result(held, 'kept');
  }
  return mergePermitting(held, asserted, assertedRank < heldRank);
}

/** Dimension by dimension, for a held record that permits and an assertion that does not refuse. */
function mergePermitting(held: ConsentRecord, asserted: ConsentRecord, lowered: boolean): ConsentRecordMerge {
  const narrowed: ConsentDimension[] = lowered ? ['state'] : [];
  const widened: ConsentDimension[] = !lowered && asserted.state !== held.state ? ['state'] : [];
  const channels = narrowList(held.channels, asserted.channels);
  const audience = narrowList(held.granted_to, asserted.granted_to);
  const expiry = earlierExpiry(held.expires_at, asserted.expires_at);
  const note = (dimension: ConsentDimension, merge: DimensionMerge<unknown>): void => {
    if (merge.narrowed) narrowed.push(dimension);
    if (merge.widened) widened.push(dimension);
  };
  note('channels', channels);
  note('granted_to', audience);
  note('expires_at', expiry);
  if (EVIDENCE_KEYS.some((key) => asserted[key] !== undefined && asserted[key] !== held[key]))
    widened.push('evidence');
  const outcome = widened.length > 0 ? 'conflict' : narrowed.length > 0 ? 'lowered' : 'kept';
  if (outcome === 'kept') return result(held, outcome);
  const record: ConsentRecord = {
    ...held,
    state: lowered ? asserted.state : held.state,
    ...(channels.value !== undefined ? { channels: channels.value } : {}),
    ...(audience.value !== undefined ? { granted_to: audience.value } : {}),
    ...(expiry.value !== undefined ? { expires_at: expiry.value } : {}),
  };
  return result(record, outcome, { narrowed, widened });
}

interface DimensionMerge<T> {
  value: T | undefined;
  narrowed: boolean;
  widened: boolean;
}

/** An allow-list (absent = unrestricted): the inbound list may drop entries, never add one. */
function narrowList<T extends string>(
  held: readonly T[] | undefined,
  asserted: readonly T[] | undefined,
): DimensionMerge<T[]> {
  if (asserted === undefined) return { value: held && [...held], narrowed: false, widened: false };
  if (held === undefined) return { value: [...asserted], narrowed: true, widened: false };
  const value = held.filter((entry) => asserted.includes(entry));
  return {
    value,
    narrowed: value.length < held.length,
    widened: asserted.some((entry) => !held.includes(entry)),
  };
}

/** An expiry (absent = never): the inbound one may come earlier, never later. */
function earlierExpiry(held: string | undefined, asserted: string | undefined): DimensionMerge<string> {
  if (asserted === undefined) return { value: held, narrowed: false, widened: false };
  if (held === undefined) return { value: asserted, narrowed: true, widened: false };
  const delta = Date.parse(asserted) - Date.parse(held);
  return { value: delta < 0 ? asserted : held, narrowed: delta < 0, widened: delta > 0 };
}

function result(
  record: ConsentRecord | undefined,
  outcome: ConsentOutcome,
  { narrowed = [], widened = [] }: Partial<Pick<ConsentRecordMerge, 'narrowed' | 'widened'>> = {},
): ConsentRecordMerge {
  return { record, outcome, narrowed, widened };
}

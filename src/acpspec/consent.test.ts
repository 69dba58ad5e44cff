import { describe, expect, it } from 'vitest';
import { ACP_CONSENT_STATES, type ConsentState } from './constants.js';
import { consentShortfalls, effectiveConsent, mergeConsent, mergeConsentRecord, type ConsentOutcome } from './consent.js';
import type { ConsentRecord } from './envelope.js';
import { grant, RECEIVER_AGENT_ID } from '../../test/helpers/acp-builders.js';

const evidenced = (state: ConsentState): ConsentRecord => grant({ state });
const rank = (s: ConsentState): number => ACP_CONSENT_STATES.indexOf(s);

/** Expected outcome for every held × inbound pair (design "Consent"). */
function expected(held: ConsentState | undefined, inbound: ConsentState | undefined): { outcome: ConsentOutcome; state: ConsentState | undefined } {
  if (inbound === undefined) return { outcome: held === undefined ? 'none' : 'kept', state: held };
  if (held === undefined) return { outcome: rank(inbound) <= rank('unknown') ? 'recorded' : 'established', state: inbound };
  if (rank(inbound) > rank(held)) return { outcome: 'conflict', state: held };
  if (rank(inbound) < rank(held)) return { outcome: 'lowered', state: inbound };
  return { outcome: 'kept', state: held };
}

describe('consent lattice (design "Consent")', () => {
  const states = [undefined, ...ACP_CONSENT_STATES];
  const pairs = states.flatMap((held) => states.map((inbound) => [held ?? 'nothing', inbound ?? 'nothing', held, inbound] as const));

  it.each(pairs)('held %s × inbound %s', (_h, _i, held, inbound) => {
    const result = mergeConsentRecord(held && evidenced(held), inbound && evidenced(inbound));
    const want = expected(held, inbound);
    expect(result.outcome).toBe(want.outcome);
    expect(result.record?.state).toBe(want.state);
  });

  it('does not establish a grant without evidence when nothing is held', () => {
    expect(mergeConsentRecord(undefined, { state: 'granted' })).toEqual({ record: undefined, outcome: 'unestablished' });
  });

  it('records a refused raise as a consent.conflict event with held, asserted and envelope_id', () => {
    const merge = mergeConsent({ p1: { data_sharing: evidenced('denied') } }, { p1: { data_sharing: evidenced('granted') } }, 'urn:uuid:x');
    expect(merge.consent['p1']?.data_sharing?.state).toBe('denied');
    expect(merge.events).toEqual([
      { type: 'consent.conflict', subject: '/consent/p1/data_sharing', data: { held: 'denied', asserted: 'granted', envelope_id: 'urn:uuid:x', party_id: 'p1', scope: 'data_sharing' } },
    ]);
  });

  it('emits consent.established for an evidenced first grant', () => {
    const merge = mergeConsent(undefined, { p1: { credit: evidenced('limited') } }, 'e');
    expect(merge.events.map((e) => e.type)).toEqual(['consent.established']);
  });

  it('keeps held records the inbound map omits', () => {
    const merge = mergeConsent({ p1: { contact: evidenced('granted') } }, {}, 'e');
    expect(merge.consent).toEqual({ p1: { contact: evidenced('granted') } });
  });

  it('treats an expired grant as unknown', () => {
    expect(effectiveConsent(grant({ expires_at: '2025-01-01T00:00:00Z' }), Date.parse('2025-06-01T00:00:00Z'))).toBe('unknown');
  });
});

describe('consent required for personal data (design "Consent")', () => {
  const context = { receiverAgentId: RECEIVER_AGENT_ID, nowMs: Date.parse('2025-06-01T12:00:00Z') };

  it('accepts data_sharing at least limited', () => {
    expect(consentShortfalls({ p1: { data_sharing: grant({ state: 'limited' }) } }, new Map([['p1', { credit: false }]]), context)).toEqual([]);
  });

  it('requires granted_to to include the receiver when set', () => {
    const consent = { p1: { data_sharing: grant({ granted_to: ['https://other.example'] }) } };
    expect(consentShortfalls(consent, new Map([['p1', { credit: false }]]), context)).toEqual([
      { party_id: 'p1', scope: 'data_sharing', required: 'limited', held: 'granted' },
    ]);
  });

  it('additionally requires credit consent for credit data', () => {
    const shortfalls = consentShortfalls({ p1: { data_sharing: grant() } }, new Map([['p1', { credit: true }]]), context);
    expect(shortfalls).toEqual([{ party_id: 'p1', scope: 'credit', required: 'limited', held: null }]);
  });
});

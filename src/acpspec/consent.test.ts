import { describe, expect, it } from 'vitest';
import { ACP_CONSENT_STATES, type ConsentState } from './constants.js';
import { consentShortfalls, mergeConsent } from './consent.js';
import {
  effectiveConsent,
  mergeConsentRecord,
  type ConsentDimension,
  type ConsentOutcome,
} from './consent-record.js';
import type { ConsentRecord } from './envelope.js';
import { grant, RECEIVER_AGENT_ID } from '../../test/helpers/acp-builders.js';

const evidenced = (state: ConsentState): ConsentRecord => grant({ state });
const NOW = Date.parse('2025-06-01T12:00:00Z');
const OTHER = 'agent:someone-else';
const LAPSED = '2020-06-01T00:00:00Z';
const rank = (s: ConsentState): number => ACP_CONSENT_STATES.indexOf(s);

/** Expected outcome for every held × inbound pair (docs/acpspec-core.md "Consent"). */
function expected(
  held: ConsentState | undefined,
  inbound: ConsentState | undefined,
): { outcome: ConsentOutcome; state: ConsentState | undefined } {
  if (inbound === undefined) return { outcome: held === undefined ? 'none' : 'kept', state: held };
  if (held === undefined)
    return { outcome: rank(inbound) <= rank('unknown') ? 'recorded' : 'established', state: inbound };
  if (rank(inbound) > rank(held)) return { outcome: 'conflict', state: held };
  if (rank(inbound) < rank(held)) return { outcome: 'lowered', state: inbound };
  return { outcome: 'kept', state: held };
}

describe('consent lattice (docs/acpspec-core.md "Consent")', () => {
  const states = [undefined, ...ACP_CONSENT_STATES];
  const pairs = states.flatMap((held) =>
    states.map((inbound) => [held ?? 'nothing', inbound ?? 'nothing', held, inbound] as const),
  );

  it.each(pairs)('held %s × inbound %s', (_h, _i, held, inbound) => {
    const result = mergeConsentRecord(held && evidenced(held), inbound && evidenced(inbound), NOW);
    const want = expected(held, inbound);
    expect(result.outcome).toBe(want.outcome);
    expect(result.record?.state).toBe(want.state);
  });

  it('does not establish a grant without evidence when nothing is held', () => {
    expect(mergeConsentRecord(undefined, { state: 'granted' }, NOW)).toMatchObject({
      record: undefined,
      outcome: 'unestablished',
    });
  });

  it('records a refused raise as a consent.conflict event with held, asserted and envelope_id', () => {
    const merge = mergeConsent(
      { p1: { data_sharing: evidenced('denied') } },
      { p1: { data_sharing: evidenced('granted') } },
      { envelopeId: 'urn:uuid:x', nowMs: NOW },
    );
    expect(merge.consent['p1']?.data_sharing?.state).toBe('denied');
    expect(merge.events).toEqual([
      {
        type: 'consent.conflict',
        subject: '/consent/p1/data_sharing',
        data: {
          held: 'denied',
          asserted: 'granted',
          envelope_id: 'urn:uuid:x',
          party_id: 'p1',
          scope: 'data_sharing',
          widened: ['state'],
        },
      },
    ]);
  });

  it('emits consent.established for an evidenced first grant', () => {
    const merge = mergeConsent(
      undefined,
      { p1: { credit: evidenced('limited') } },
      { envelopeId: 'e', nowMs: NOW },
    );
    expect(merge.events.map((e) => e.type)).toEqual(['consent.established']);
  });

  it('keeps held records the inbound map omits', () => {
    const merge = mergeConsent(
      { p1: { contact: evidenced('granted') } },
      {},
      { envelopeId: 'e', nowMs: NOW },
    );
    expect(merge.consent).toEqual({ p1: { contact: evidenced('granted') } });
  });

  it('treats an expired grant as unknown', () => {
    expect(
      effectiveConsent(grant({ expires_at: '2025-01-01T00:00:00Z' }), Date.parse('2025-06-01T00:00:00Z')),
    ).toBe('unknown');
  });
});

/** One held × inbound pair of the per-dimension table: what is held afterwards and what is reported. */
interface DimensionCase {
  held: ConsentRecord;
  inbound: ConsentRecord;
  record: ConsentRecord;
  outcome: ConsentOutcome;
  narrowed?: ConsentDimension[];
  widened?: ConsentDimension[];
}

const lapsed = grant({ captured_at: '2019-06-01T11:58:00Z', expires_at: LAPSED });

/** Every dimension of the record (state, channels, audience, expiry, evidence): narrowed yes, widened never. */
const dimensionCases: Record<string, DimensionCase> = {
  'a lowering keeps the held audience (docs/acpspec-core.md "Consent")': {
    held: grant({ granted_to: [OTHER] }),
    inbound: { state: 'limited' },
    record: grant({ state: 'limited', granted_to: [OTHER] }),
    outcome: 'lowered',
    narrowed: ['state'],
  },
  'a lowering keeps the held expiry': {
    held: grant({ expires_at: '2026-01-01T00:00:00Z' }),
    inbound: { state: 'limited' },
    record: grant({ state: 'limited', expires_at: '2026-01-01T00:00:00Z' }),
    outcome: 'lowered',
    narrowed: ['state'],
  },
  'a "lowering" of an expired grant does not revive it (docs/acpspec-core.md "Consent")': {
    held: lapsed,
    inbound: { state: 'limited' },
    record: lapsed,
    outcome: 'conflict',
    widened: ['state'],
  },
  'an evidenced grant does not renew an expired one': {
    held: lapsed,
    inbound: grant({ expires_at: '2027-01-01T00:00:00Z' }),
    record: lapsed,
    outcome: 'conflict',
    widened: ['state'],
  },
  'an expired grant can still be revoked': {
    held: lapsed,
    inbound: { state: 'revoked', captured_at: '2025-06-01T11:59:00Z' },
    record: { state: 'revoked', captured_at: '2025-06-01T11:59:00Z' },
    outcome: 'lowered',
    narrowed: ['state'],
  },
  'a refusal replaces the whole record': {
    held: grant({ granted_to: [OTHER] }),
    inbound: { state: 'denied' },
    record: { state: 'denied' },
    outcome: 'lowered',
    narrowed: ['state'],
  },
  'an audience narrows to the agents both name': {
    held: grant({ granted_to: [RECEIVER_AGENT_ID, OTHER] }),
    inbound: grant({ granted_to: [OTHER] }),
    record: grant({ granted_to: [OTHER] }),
    outcome: 'lowered',
    narrowed: ['granted_to'],
  },
  'an unrestricted grant takes an inbound audience': {
    held: grant(),
    inbound: grant({ granted_to: [OTHER] }),
    record: grant({ granted_to: [OTHER] }),
    outcome: 'lowered',
    narrowed: ['granted_to'],
  },
  'an audience cannot gain an agent': {
    held: grant({ granted_to: [OTHER] }),
    inbound: grant({ granted_to: [OTHER, RECEIVER_AGENT_ID] }),
    record: grant({ granted_to: [OTHER] }),
    outcome: 'conflict',
    widened: ['granted_to'],
  },
  'an audience named by neither leaves nobody': {
    held: grant({ granted_to: [OTHER] }),
    inbound: grant({ granted_to: [RECEIVER_AGENT_ID] }),
    record: grant({ granted_to: [] }),
    outcome: 'conflict',
    narrowed: ['granted_to'],
    widened: ['granted_to'],
  },
  'an omitted audience keeps the held one': {
    held: grant({ granted_to: [OTHER] }),
    inbound: grant(),
    record: grant({ granted_to: [OTHER] }),
    outcome: 'kept',
  },
  'channels narrow': {
    held: grant({ channels: ['email', 'sms'] }),
    inbound: grant({ channels: ['sms'] }),
    record: grant({ channels: ['sms'] }),
    outcome: 'lowered',
    narrowed: ['channels'],
  },
  'channels cannot widen': {
    held: grant({ channels: ['email'] }),
    inbound: grant({ channels: ['email', 'sms'] }),
    record: grant({ channels: ['email'] }),
    outcome: 'conflict',
    widened: ['channels'],
  },
  'an expiry can be brought forward': {
    held: grant({ expires_at: '2026-01-01T00:00:00Z' }),
    inbound: grant({ expires_at: '2025-12-01T00:00:00Z' }),
    record: grant({ expires_at: '2025-12-01T00:00:00Z' }),
    outcome: 'lowered',
    narrowed: ['expires_at'],
  },
  'an unexpiring grant takes an inbound expiry': {
    held: grant(),
    inbound: grant({ expires_at: '2026-01-01T00:00:00Z' }),
    record: grant({ expires_at: '2026-01-01T00:00:00Z' }),
    outcome: 'lowered',
    narrowed: ['expires_at'],
  },
  'an expiry cannot be pushed back': {
    held: grant({ expires_at: '2026-01-01T00:00:00Z' }),
    inbound: grant({ expires_at: '2027-01-01T00:00:00Z' }),
    record: grant({ expires_at: '2026-01-01T00:00:00Z' }),
    outcome: 'conflict',
    widened: ['expires_at'],
  },
  'an omitted expiry keeps the held one': {
    held: grant({ expires_at: '2026-01-01T00:00:00Z' }),
    inbound: { state: 'granted' },
    record: grant({ expires_at: '2026-01-01T00:00:00Z' }),
    outcome: 'kept',
  },
  'the evidence of a kept grant is not replaced': {
    held: grant(),
    inbound: grant({ consent_text: 'Share my details with anyone.' }),
    record: grant(),
    outcome: 'conflict',
    widened: ['evidence'],
  },
  'a lowering to limited keeps the evidence the grant was established with': {
    held: grant(),
    inbound: grant({ state: 'limited', method: 'verbal' }),
    record: grant({ state: 'limited' }),
    outcome: 'conflict',
    narrowed: ['state'],
    widened: ['evidence'],
  },
  'a refused raise still narrows the audience': {
    held: grant({ state: 'limited', granted_to: [RECEIVER_AGENT_ID, OTHER] }),
    inbound: grant({ granted_to: [OTHER] }),
    record: grant({ state: 'limited', granted_to: [OTHER] }),
    outcome: 'conflict',
    narrowed: ['granted_to'],
    widened: ['state'],
  },
};

describe('consent: most restrictive wins, dimension by dimension (docs/acpspec-core.md "Consent")', () => {
  it.each(Object.entries(dimensionCases))('%s', (_name, c) => {
    const merge = mergeConsentRecord(c.held, c.inbound, NOW);
    expect(merge.record).toEqual(c.record);
    expect(merge.outcome).toBe(c.outcome);
    expect(merge.narrowed).toEqual(c.narrowed ?? []);
    expect(merge.widened).toEqual(c.widened ?? []);
  });

  it('records a narrowing as consent.lowered and a refused widening as consent.conflict', () => {
    const merge = mergeConsent(
      { p1: { data_sharing: grant({ granted_to: [OTHER] }) } },
      { p1: { data_sharing: grant({ state: 'limited', granted_to: [RECEIVER_AGENT_ID] }) } },
      { envelopeId: 'e', nowMs: NOW },
    );
    expect(merge.events.map((e) => [e.type, e.data['narrowed'] ?? e.data['widened']])).toEqual([
      ['consent.lowered', ['state', 'granted_to']],
      ['consent.conflict', ['granted_to']],
    ]);
  });

  it('refuses personal data under an audience a lowering tried to drop (docs/acpspec-core.md "Consent")', () => {
    const merge = mergeConsent(
      { p1: { data_sharing: grant({ granted_to: [OTHER] }) } },
      { p1: { data_sharing: { state: 'limited' } } },
      { envelopeId: 'e', nowMs: NOW },
    );
    expect(
      consentShortfalls(merge.consent, new Map([['p1', { credit: false }]]), {
        receiverAgentId: RECEIVER_AGENT_ID,
        nowMs: NOW,
      }),
    ).toHaveLength(1);
  });

  it('refuses personal data under an expired grant a lowering tried to revive (docs/acpspec-core.md "Consent")', () => {
    const merge = mergeConsent(
      { p1: { data_sharing: lapsed } },
      { p1: { data_sharing: { state: 'limited' } } },
      { envelopeId: 'e', nowMs: NOW },
    );
    expect(
      consentShortfalls(merge.consent, new Map([['p1', { credit: false }]]), {
        receiverAgentId: RECEIVER_AGENT_ID,
        nowMs: NOW,
      }),
    ).toEqual([{ party_id: 'p1', scope: 'data_sharing', required: 'limited', held: 'unknown' }]);
  });
});

describe('consent required for personal data (docs/acpspec-core.md "Consent")', () => {
  const context = { receiverAgentId: RECEIVER_AGENT_ID, nowMs: Date.parse('2025-06-01T12:00:00Z') };

  it('accepts data_sharing at least limited', () => {
    expect(
      consentShortfalls(
        { p1: { data_sharing: grant({ state: 'limited' }) } },
        new Map([['p1', { credit: false }]]),
        context,
      ),
    ).toEqual([]);
  });

  it('requires granted_to to include the receiver when set', () => {
    const consent = { p1: { data_sharing: grant({ granted_to: ['https://other.example'] }) } };
    expect(consentShortfalls(consent, new Map([['p1', { credit: false }]]), context)).toEqual([
      { party_id: 'p1', scope: 'data_sharing', required: 'limited', held: 'granted' },
    ]);
  });

  it('additionally requires credit consent for credit data', () => {
    const shortfalls = consentShortfalls(
      { p1: { data_sharing: grant() } },
      new Map([['p1', { credit: true }]]),
      context,
    );
    expect(shortfalls).toEqual([{ party_id: 'p1', scope: 'credit', required: 'limited', held: null }]);
  });
});

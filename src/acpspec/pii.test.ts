import { describe, expect, it } from 'vitest';
import {
  containsPersonalData,
  derivePiiLocations,
  PII_LOCATIONS,
  subjectsOf,
  findPersonalData,
  personalDataAffectedBy,
} from './pii.js';
import { anonymousState, BUYER, buyer, delta, leadState, snapshot } from '../../test/helpers/acp-builders.js';

describe('personal data paths (docs/acpspec-binding.md "Personal data and TLS")', () => {
  it('derives the PII locations from the schema annotations', () => {
    const paths = PII_LOCATIONS.map((l) => l.path.join('/'));
    expect(paths).toEqual(
      expect.arrayContaining([
        'parties/*/name',
        'parties/*/contact',
        'parties/*/address',
        'parties/*/date_of_birth',
        'parties/*/driver_license',
        'vehicles/*/registration',
        'financing/credit_application',
      ]),
    );
    expect(PII_LOCATIONS.filter((l) => l.credit).map((l) => l.path.join('/'))).toEqual([
      'financing/credit_application',
      'financing/decision',
    ]);
  });

  it('follows $ref and nested annotations in any schema', () => {
    const schema = {
      $defs: { secret: { type: 'string', 'x-acp-pii': true } },
      properties: { a: { additionalProperties: { properties: { s: { $ref: '#/$defs/secret' } } } } },
    };
    expect(derivePiiLocations(schema).map((l) => l.path)).toEqual([['a', '*', 's']]);
  });

  it('finds personal data in a snapshot', () => {
    expect(containsPersonalData(snapshot())).toBe(true);
    expect(containsPersonalData(snapshot({ state: anonymousState() }))).toBe(false);
  });

  it('finds personal data in a delta value that contains a PII field', () => {
    expect(
      containsPersonalData(delta(snapshot(), [{ op: 'add', path: '/parties/p2', value: buyer() }])),
    ).toBe(true);
  });

  it('finds personal data in a delta writing inside a PII field', () => {
    expect(
      containsPersonalData(
        delta(snapshot(), [
          { op: 'replace', path: '/parties/p-buyer/contact/email', value: 'x@example.com' },
        ]),
      ),
    ).toBe(true);
  });

  it('ignores deltas that only remove or touch non-personal fields', () => {
    expect(
      containsPersonalData(
        delta(snapshot(), [
          { op: 'remove', path: '/parties/p-buyer/contact' },
          { op: 'replace', path: '/quote/status', value: 'draft' },
        ]),
      ),
    ).toBe(false);
  });

  it('resolves data subjects through x-acp-subject', () => {
    const state = leadState({
      vehicles: { t: { role: 'trade_in', owner_party_id: 'p-owner', registration: { plate: 'X1' } } },
      financing: { credit_application: { status: 'submitted', applicant_party_ids: ['p-a', 'p-b'] } },
    });
    const subjects = subjectsOf(findPersonalData(state), state);
    expect(Object.fromEntries(subjects)).toEqual({
      [BUYER]: { credit: false },
      'p-owner': { credit: false },
      'p-a': { credit: true },
      'p-b': { credit: true },
    });
  });

  it('counts personal data re-pointed to another party as affected by the delta (docs/acpspec-core.md "Consent")', () => {
    const state = leadState({
      vehicles: { t: { role: 'trade_in', owner_party_id: 'p-owner', registration: { plate: 'X1' } } },
    });
    const affected = personalDataAffectedBy(
      [{ op: 'replace', path: '/vehicles/t/owner_party_id', value: 'p-owner' }],
      state,
    );
    expect(affected.map((hit) => hit.segments.join('/'))).toEqual(['vehicles/t/registration']);
    expect(
      personalDataAffectedBy([{ op: 'replace', path: '/vehicles/t/role', value: 'delivered' }], state),
    ).toEqual([]);
  });
});

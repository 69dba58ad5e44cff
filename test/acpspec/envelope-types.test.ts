import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { generateEnvelopeTypes, ENVELOPE_TYPES_FILE } from '../../scripts/envelope-types.js';
import {
  ACP_CONSENT_SCOPES,
  ACP_CONSENT_STATES,
  ACP_HEADER_KEYS,
  ACP_OBJECT_KEYS,
  type ConsentScope,
  type ConsentState,
} from '../../src/acpspec/constants.js';
import type { DeltaEnvelope, PatchOperation, SnapshotEnvelope } from '../../src/acpspec/envelope.js';
import type * as Schema from '../../src/acpspec/envelope-schema.gen.js';
import { ACP_ENVELOPE_SCHEMA } from '../../src/acpspec/schema.js';

type Root = Schema.EnvelopeSchema;

describe('envelope types come from the schema (issue 10)', () => {
  it('the generated file is what the schema generates now (run npm run gen:types)', async () => {
    expect(readFileSync(ENVELOPE_TYPES_FILE, 'utf8')).toBe(await generateEnvelopeTypes());
  });

  it('snapshots and deltas are envelopes of the generated root type, and only with their own members', () => {
    expectTypeOf<SnapshotEnvelope>().toMatchTypeOf<Root>();
    expectTypeOf<DeltaEnvelope>().toMatchTypeOf<Omit<Root, 'patch'> & { patch?: Schema.PatchOperation[] }>();
    expectTypeOf<keyof SnapshotEnvelope>().toEqualTypeOf<Exclude<keyof Root, never>>();
    expectTypeOf<PatchOperation>().toMatchTypeOf<Schema.PatchOperation>();
    expectTypeOf<PatchOperation['op']>().toEqualTypeOf<Schema.PatchOperation['op']>();
  });

  it('the constants the code branches on name exactly what the schema declares', () => {
    expectTypeOf<ConsentScope>().toEqualTypeOf<keyof Schema.PartyConsent>();
    expectTypeOf<ConsentState>().toEqualTypeOf<Schema.ConsentRecord['state']>();
    const properties = Object.keys(ACP_ENVELOPE_SCHEMA['properties'] as object);
    expect(properties.sort()).toEqual([...ACP_HEADER_KEYS, ...ACP_OBJECT_KEYS, 'patch'].sort());
    const defs = ACP_ENVELOPE_SCHEMA['$defs'] as Record<
      string,
      { properties: Record<string, { enum?: string[] }> }
    >;
    expect(new Set(Object.keys(defs['partyConsent']!.properties))).toEqual(new Set(ACP_CONSENT_SCOPES));
    expect(defs['consentRecord']!.properties['state']!.enum).toEqual([...ACP_CONSENT_STATES]);
  });
});

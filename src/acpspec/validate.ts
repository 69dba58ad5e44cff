import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ACP_SCHEMA_KEYWORDS } from './constants.js';
import type { Envelope, SnapshotEnvelope } from './envelope.js';
import { AcpError, type AcpIssue } from './errors.js';
import { ACP_ENVELOPE_SCHEMA } from './schema.js';
import { schemaIssuesOf } from '../shared/schema-issues.js';

// ajv-formats is CommonJS with a `default` property; NodeNext types see the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function compile(): ValidateFunction {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
  addFormats(ajv, ['date-time', 'date', 'email', 'uri']);
  for (const keyword of Object.values(ACP_SCHEMA_KEYWORDS)) ajv.addKeyword({ keyword });
  return ajv.compile(ACP_ENVELOPE_SCHEMA);
}

/** Compiled once at module load (STYLE.md "Boundaries"). */
const validateEnvelopeSchema = compile();

/** Result of {@link checkEnvelope}. */
export type EnvelopeCheck = { ok: true; envelope: Envelope } | { ok: false; issues: AcpIssue[] };

/**
 * Checks a value against the envelope schema and reports every issue with its JSON Pointer. Messages are
 * Ajv's rule descriptions; no instance value is ever copied into an issue.
 */
export function checkEnvelope(value: unknown): EnvelopeCheck {
  if (validateEnvelopeSchema(value)) return { ok: true, envelope: value as Envelope };
  return { ok: false, issues: toIssues(validateEnvelopeSchema.errors ?? []) };
}

/**
 * Parses an untrusted value as an envelope.
 * @throws AcpError `ACP_SCHEMA_INVALID` with `details.issues` listing every violation.
 */
export function parseEnvelope(value: unknown): Envelope {
  const result = checkEnvelope(value);
  if (!result.ok) throw new AcpError('ACP_SCHEMA_INVALID', undefined, { issues: result.issues });
  return result.envelope;
}

/** Checks that a candidate snapshot (e.g. a delta's result) is a complete, valid snapshot. */
export function checkSnapshot(value: SnapshotEnvelope): AcpIssue[] {
  const result = checkEnvelope(value);
  return result.ok ? [] : result.issues;
}

function toIssues(errors: readonly ErrorObject[]): AcpIssue[] {
  return schemaIssuesOf(errors);
}

import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ACP_SCHEMA_KEYWORDS, type AcpObjectKey } from './constants.js';
import type { AcpAck, AcpEvent, AcpState, Envelope, Producer } from './envelope.js';
import { AcpError, type AcpIssue } from './errors.js';
import { ACP_ENVELOPE_SCHEMA } from './schema.js';
import { schemaIssuesOf } from '../shared/schema-issues.js';

// ajv-formats is CommonJS with a `default` property; NodeNext types see the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function createAjv(options: { allErrors: boolean; formats: 'full' | 'fast' }): Ajv2020 {
  const instance = new Ajv2020({ allErrors: options.allErrors, strict: true, strictRequired: false });
  addFormats(instance, { mode: options.formats, formats: ['date-time', 'date', 'email', 'uri'] });
  for (const keyword of Object.values(ACP_SCHEMA_KEYWORDS)) instance.addKeyword({ keyword });
  instance.addSchema(ACP_ENVELOPE_SCHEMA);
  return instance;
}

const ajv = createAjv({ allErrors: true, formats: 'full' });
/**
 * For parts read back from storage: they were checked in full on the way in, so the check on the way out
 * (a corrupt or foreign row must not pass as a state) uses ajv-formats' fast format checks and stops at
 * the first error. It keeps a state request for a 1,000-event transaction well under 5 ms (docs/acpspec-core.md "Ingest path").
 */
const storedAjv = createAjv({ allErrors: false, formats: 'fast' });
const SCHEMA_ID = String(ACP_ENVELOPE_SCHEMA['$id']);
const ref = (pointer: string): { $ref: string } => ({ $ref: `${SCHEMA_ID}#${pointer}` });

/** One validator per top-level object (`/properties/<key>`); the return type lets none of the eight be missed. */
function objectValidators(instance: Ajv2020): Record<AcpObjectKey, ValidateFunction> {
  const compile = (key: AcpObjectKey): ValidateFunction => instance.compile(ref(`/properties/${key}`));
  return {
    transaction: compile('transaction'),
    parties: compile('parties'),
    consent: compile('consent'),
    vehicles: compile('vehicles'),
    quote: compile('quote'),
    financing: compile('financing'),
    fulfillment: compile('fulfillment'),
    events: compile('events'),
  };
}

/** The envelope schema and the parts of it checked on their own; compiled once at module load (STYLE.md "Boundaries"). */
const validateEnvelopeSchema = ajv.compile<Envelope>(ref(''));
const validateObject = objectValidators(ajv);
const validateEvent = ajv.compile<AcpEvent>(ref('/$defs/event'));
const storedObject = objectValidators(storedAjv);
const storedEvents = storedAjv.compile<AcpEvent[]>(ref('/properties/events'));
const storedProducer = storedAjv.compile<Producer>(ref('/$defs/producer'));
const validateAck = ajv.compile<AcpAck>({
  type: 'object',
  required: ['envelope_id', 'transaction_id', 'state_envelope_id'],
  properties: {
    envelope_id: ref('/$defs/envelopeId'),
    transaction_id: ref('/$defs/id'),
    state_envelope_id: ref('/$defs/envelopeId'),
  },
});

/** Result of {@link checkEnvelope}. */
export type EnvelopeCheck = { ok: true; envelope: Envelope } | { ok: false; issues: AcpIssue[] };

/**
 * Checks a value against the envelope schema and reports every issue with its JSON Pointer. Messages are
 * Ajv's rule descriptions; no instance value is ever copied into an issue.
 */
export function checkEnvelope(value: unknown): EnvelopeCheck {
  if (validateEnvelopeSchema(value)) return { ok: true, envelope: value };
  return { ok: false, issues: toIssues(validateEnvelopeSchema.errors ?? []) };
}

/**
 * Parses an untrusted value as an envelope.
 * @throws AcpError `ACP_SCHEMA_INVALID` with `details.issues` listing every violation.
 */
export function parseEnvelope(value: unknown): Envelope {
  const result = checkEnvelope(value);
  if (!result.ok) throw new AcpError('ACP_SCHEMA_INVALID', undefined, { details: { issues: result.issues } });
  return result.envelope;
}

/**
 * Checks the parts of a state a patch changed, given that the rest was valid before (docs/acpspec-core.md "Ingest path"): each
 * object in `changed` against its schema, and the events from index `eventsFrom` on against the event
 * schema. Every rule of the envelope schema is local to one of the eight objects (and, under `events`,
 * to one event), so this reports exactly what checking the whole state as a snapshot would, with
 * pointers into the state.
 */
export function checkStateParts(
  state: AcpState,
  changed: Iterable<AcpObjectKey>,
  eventsFrom = state.events.length,
): AcpIssue[] {
  const issues: AcpIssue[] = [];
  for (const key of changed) {
    const value: unknown = state[key];
    if (value === undefined) issues.push({ pointer: `/${key}`, keyword: 'required', message: 'is required' });
    else if (!validateObject[key](value))
      issues.push(...toIssues(validateObject[key].errors ?? [], `/${key}`));
  }
  const events: unknown = state.events;
  if (Array.isArray(events)) {
    for (let i = eventsFrom; i < events.length; i++) {
      if (!validateEvent(events[i])) issues.push(...toIssues(validateEvent.errors ?? [], `/events/${i}`));
    }
  }
  return issues;
}

/** Type guard for one state object read back from storage (checked against its schema, fast formats). */
export function isStoredStateObject<K extends AcpObjectKey>(key: K, value: unknown): value is AcpState[K] {
  return storedObject[key](value);
}

/** Type guard for an event stream read back from storage (checked against the schema, fast formats). */
export function isStoredEvents(value: unknown): value is AcpEvent[] {
  return storedEvents(value);
}

/** Type guard for a producer read back from storage (a state body's header; fast formats). */
export function isStoredProducer(value: unknown): value is Producer {
  return storedProducer(value);
}

/** Type guard for an event (read back from storage or from a peer). */
export function isAcpEvent(value: unknown): value is AcpEvent {
  return validateEvent(value);
}

/**
 * Decodes an `acp_ack` a peer answered with: the three ids, checked (extra members are dropped).
 * @throws AcpError `ACP_MESSAGE_NONCONFORMANT` when it is not an ack.
 */
export function parseAck(value: unknown): AcpAck {
  if (!validateAck(value))
    throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'the receiver answered with a malformed acp_ack');
  return {
    envelope_id: value.envelope_id,
    transaction_id: value.transaction_id,
    state_envelope_id: value.state_envelope_id,
  };
}

/** Issues with pointers into the whole state (the shared rules: allowed values listed, no instance values). */
function toIssues(errors: readonly ErrorObject[], prefix = ''): AcpIssue[] {
  return schemaIssuesOf(errors).map((issue) => ({ ...issue, pointer: prefix + issue.pointer }));
}

/**
 * Every ACPspec wire name that may change, written once (docs/acpspec-core.md: the core
 * specification is not public yet, so a swap must be a one-line change).
 */

/** A2A extension URI; versions the binding, not the envelope (seed "Declaring Support"). Our placeholder. */
export const ACP_EXTENSION_URI = 'https://acpspec.org/a2a/v1';

/**
 * MCP extension identifier of the ACPspec MCP binding (MCP's reverse-DNS rule; seed 001 "Where This Sits in
 * the Stack" names the MCP page). Our placeholder; versions the binding, not the envelope.
 */
export const ACP_MCP_EXTENSION_ID = 'org.acpspec/mcp';

/** MCP resource URIs of the binding (docs/acpspec-mcp.md "Resources"). */
export const ACP_MCP_URIS = {
  /** RFC 6570 template of a transaction's state resource. */
  transactionTemplate: 'acp://transactions/{transaction_id}',
  transaction: (transactionId: string): string => `acp://transactions/${encodeURIComponent(transactionId)}`,
  /** The envelope JSON Schema as a resource. */
  schema: 'acp://schemas/0.1/envelope.schema.json',
} as const;

/** The envelope version this implementation produces. */
export const ACP_VERSION = '0.1';

/** Envelope versions a receiver accepts unless told otherwise. */
export const ACP_DEFAULT_ACCEPTED_VERSIONS: readonly string[] = [ACP_VERSION];

/** Media type of an envelope's canonical bytes. Our choice: the core specification names none. */
export const ACP_MEDIA_TYPE = 'application/acp+json';

/** URL path at which the host serves the envelope JSON Schema; also the schema's `$id`. */
export const ACP_SCHEMA_PATH = '/acp/schemas/0.1/envelope.schema.json';

/** File name of the envelope schema under the package's `schemas/` folder. */
export const ACP_SCHEMA_FILE = 'acpspec-envelope-0.1.schema.json';

/** Route prefix of the HTTPS binding. */
export const ACP_HTTP_PREFIX = '/acp/v0.1';

/** HTTPS binding routes (docs/acpspec-binding.md "HTTPS binding"). */
export const ACP_HTTP_ROUTES = {
  envelopes: `${ACP_HTTP_PREFIX}/envelopes`,
  state: (transactionId: string): string =>
    `${ACP_HTTP_PREFIX}/transactions/${encodeURIComponent(transactionId)}/state`,
  events: (transactionId: string): string =>
    `${ACP_HTTP_PREFIX}/transactions/${encodeURIComponent(transactionId)}/events`,
} as const;

/** The two envelope kinds, told apart only by `parent_envelope_id` (seed "Two Agents Meet"). */
export const ACP_KINDS = ['snapshot', 'delta'] as const;
/** An envelope kind as declared in an agent card's `accepts` / `emits`. */
export type Kind = (typeof ACP_KINDS)[number];

/** Prefix of every envelope id (`urn:uuid:` + UUIDv7). */
export const ACP_ENVELOPE_ID_PREFIX = 'urn:uuid:';

/** The eight top-level objects of the envelope, in schema order. */
export const ACP_OBJECT_KEYS = [
  'transaction',
  'parties',
  'consent',
  'vehicles',
  'quote',
  'financing',
  'fulfillment',
  'events',
] as const;
/** One of the eight top-level objects. */
export type AcpObjectKey = (typeof ACP_OBJECT_KEYS)[number];

/** Header fields; a patch can never touch these. */
export const ACP_HEADER_KEYS = [
  'acp_version',
  'envelope_id',
  'transaction_id',
  'parent_envelope_id',
  'produced_at',
  'producer',
] as const;

/** Consent lattice, most restrictive first (docs/acpspec-core.md "Consent"). */
export const ACP_CONSENT_STATES = ['revoked', 'denied', 'unknown', 'limited', 'granted'] as const;
/** A consent state. */
export type ConsentState = (typeof ACP_CONSENT_STATES)[number];

/** Consent scopes. */
export const ACP_CONSENT_SCOPES = ['contact', 'marketing', 'credit', 'data_sharing', 'vehicle_data'] as const;
/** A consent scope. */
export type ConsentScope = (typeof ACP_CONSENT_SCOPES)[number];

/** Event types the receiver appends itself. */
export const ACP_EVENT_TYPES = {
  consentConflict: 'consent.conflict',
  consentEstablished: 'consent.established',
  consentLowered: 'consent.lowered',
} as const;

/** Keys of the non-envelope data parts of the A2A binding (docs/acpspec-binding.md "A2A binding"). */
export const ACP_PART_KEYS = {
  stateRequest: 'acp_state_request',
  ack: 'acp_ack',
  error: 'acp_error',
} as const;

/** Schema annotations (docs/acpspec-binding.md "Personal data and TLS"); the PII path set is derived from them. */
export const ACP_SCHEMA_KEYWORDS = {
  pii: 'x-acp-pii',
  credit: 'x-acp-credit',
  subject: 'x-acp-subject',
} as const;

import { systemClock, isoTime, type Clock } from '../shared/clock.js';
import { uuidv7, type IdSource } from '../shared/ids.js';
import { ACP_ENVELOPE_ID_PREFIX, ACP_VERSION, type ConsentScope, type ConsentState, type Kind } from './constants.js';

/*
 * TypeScript mirror of schemas/acpspec-envelope-0.1.schema.json. The schema is the only validation
 * source; these types describe what `parseEnvelope` has already checked.
 */

/** Integer minor units plus ISO 4217 currency. */
export interface Money {
  amount_minor: number;
  currency: string;
}

/** Who produced an envelope. */
export interface Producer {
  agent_id: string;
  role: string;
  organization?: string;
}

/** Fields every envelope carries. */
export interface EnvelopeHeader {
  acp_version: string;
  envelope_id: string;
  transaction_id: string;
  produced_at: string;
  producer: Producer;
}

export interface AcpTransaction {
  type: string;
  stage: string;
  opened_at?: string;
  dealer?: { dealer_id: string; name?: string; location_id?: string };
  source?: { channel?: string; agent_id?: string; campaign?: string };
  external_refs?: Record<string, string>;
}

export interface AcpAddress {
  line1?: string;
  line2?: string;
  city?: string;
  region?: string;
  postal_code?: string;
  country: string;
}

export interface AcpParty {
  kind: 'person' | 'organization';
  roles: string[];
  organization_name?: string;
  name?: { given?: string; middle?: string; family?: string; suffix?: string; full?: string };
  contact?: { email?: string; phone?: string; preferred_channel?: string };
  address?: AcpAddress;
  date_of_birth?: string;
  driver_license?: { number: string; issuing_region: string; expires_on?: string };
}

export interface ConsentRecord {
  state: ConsentState;
  channels?: string[];
  granted_to?: string[];
  captured_at?: string;
  expires_at?: string;
  captured_by?: string;
  method?: string;
  consent_text?: string;
  evidence_hash?: string;
}

/** Consent per party id, per scope. */
export type ConsentMap = Record<string, Partial<Record<ConsentScope, ConsentRecord>>>;

export interface AcpVehicle {
  role: string;
  vin?: string;
  year?: number;
  make?: string;
  model?: string;
  trim?: string;
  condition?: string;
  odometer?: { value: number; unit: 'km' | 'mi' };
  stock_number?: string;
  owner_party_id?: string;
  registration?: { plate: string; region?: string };
  lien?: { holder_name?: string; payoff?: Money };
}

export interface AcpQuote {
  status: string;
  quote_id?: string;
  valid_until?: string;
  currency?: string;
  lines?: Record<string, { kind: string; description?: string; vehicle_id?: string; quantity?: number; amount_minor: number }>;
  totals?: { subtotal_minor?: number; fees_minor?: number; tax_minor?: number; out_the_door_minor: number };
}

export interface AcpFinancing {
  method?: string;
  credit_application?: { status: string; reference?: string; submitted_at?: string; applicant_party_ids: string[] };
  offers?: Record<string, Record<string, unknown> & { kind: string; term_months: number }>;
  decision?: { status: string; offer_id?: string; decided_at?: string };
}

export interface AcpFulfillment {
  appointments?: Record<string, Record<string, unknown> & { kind: string; status: string }>;
  delivery?: Record<string, unknown> & { method: string; status: string; recipient_party_id?: string; address?: AcpAddress };
  work_orders?: Record<string, Record<string, unknown> & { status: string }>;
  documents?: Record<string, Record<string, unknown> & { kind: string; uri: string }>;
}

/** One entry of the append-only event stream. `subject` is a JSON Pointer into the state. */
export interface AcpEvent {
  event_id: string;
  type: string;
  occurred_at: string;
  actor: string;
  subject: string;
  data: Record<string, unknown>;
}

/** The eight top-level objects: the complete transaction state. */
export interface AcpState {
  transaction: AcpTransaction;
  parties: Record<string, AcpParty>;
  consent: ConsentMap;
  vehicles: Record<string, AcpVehicle>;
  quote: AcpQuote;
  financing: AcpFinancing;
  fulfillment: AcpFulfillment;
  events: AcpEvent[];
}

/** An RFC 6902 operation as the envelope allows it (no move/copy). */
export type PatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** A snapshot: the complete state, no parent, no patch. */
export type SnapshotEnvelope = EnvelopeHeader & AcpState & { parent_envelope_id?: never; patch?: never };

/** A delta: an RFC 6902 patch over the parent's resulting state. */
export type DeltaEnvelope = EnvelopeHeader & { parent_envelope_id: string; patch: PatchOperation[] };

/** Either kind; told apart only by `parent_envelope_id` (seed). */
export type Envelope = SnapshotEnvelope | DeltaEnvelope;

/** The acknowledgement of an ingested envelope (design "A2A binding": `acp_ack`). */
export interface AcpAck {
  envelope_id: string;
  transaction_id: string;
  /** The receiver's materialised state snapshot after this envelope. */
  state_envelope_id: string;
}

/** Type guard: a delta carries `parent_envelope_id`. */
export function isDelta(envelope: Envelope): envelope is DeltaEnvelope {
  return envelope.parent_envelope_id !== undefined;
}

/** Type guard: a snapshot carries no `parent_envelope_id`. */
export function isSnapshot(envelope: Envelope): envelope is SnapshotEnvelope {
  return envelope.parent_envelope_id === undefined;
}

/** The kind of an envelope. */
export function envelopeKind(envelope: Envelope): Kind {
  return isDelta(envelope) ? 'delta' : 'snapshot';
}

/** The eight objects of a snapshot, without its header. */
export function stateOf(snapshot: SnapshotEnvelope): AcpState {
  const { transaction, parties, consent, vehicles, quote, financing, fulfillment, events } = snapshot;
  return { transaction, parties, consent, vehicles, quote, financing, fulfillment, events };
}

/**
 * A new envelope id: `urn:uuid:` + UUIDv7. An injected {@link IdSource} MUST return a UUIDv7 from
 * `newId()` (no prefix), or the envelope will not validate.
 */
export function newEnvelopeId(options?: { clock?: Clock; ids?: IdSource }): string {
  const uuid = options?.ids ? options.ids.newId() : uuidv7((options?.clock ?? systemClock).now());
  return `${ACP_ENVELOPE_ID_PREFIX}${uuid}`;
}

/** What {@link buildSnapshot} needs; header fields default to a fresh id, now, and {@link ACP_VERSION}. */
export interface SnapshotInput {
  transaction_id: string;
  producer: Producer;
  state: AcpState;
  envelope_id?: string;
  produced_at?: string;
  acp_version?: string;
}

/** Builds a snapshot envelope (no validation; `parseEnvelope` is the check). */
export function buildSnapshot(input: SnapshotInput, options?: { clock?: Clock; ids?: IdSource }): SnapshotEnvelope {
  return {
    acp_version: input.acp_version ?? ACP_VERSION,
    envelope_id: input.envelope_id ?? newEnvelopeId(options),
    transaction_id: input.transaction_id,
    produced_at: input.produced_at ?? isoTime(options?.clock),
    producer: input.producer,
    ...input.state,
  };
}

/** What {@link buildDelta} needs. */
export interface DeltaInput {
  transaction_id: string;
  producer: Producer;
  parent_envelope_id: string;
  patch: PatchOperation[];
  envelope_id?: string;
  produced_at?: string;
  acp_version?: string;
}

/** Builds a delta envelope (no validation; `parseEnvelope` is the check). */
export function buildDelta(input: DeltaInput, options?: { clock?: Clock; ids?: IdSource }): DeltaEnvelope {
  return {
    acp_version: input.acp_version ?? ACP_VERSION,
    envelope_id: input.envelope_id ?? newEnvelopeId(options),
    transaction_id: input.transaction_id,
    parent_envelope_id: input.parent_envelope_id,
    produced_at: input.produced_at ?? isoTime(options?.clock),
    producer: input.producer,
    patch: input.patch,
  };
}

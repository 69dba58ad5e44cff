import { systemClock, isoTime, type Clock } from '../shared/clock.js';
import { uuidv7, type IdSource } from '../shared/ids.js';
import { ACP_ENVELOPE_ID_PREFIX, ACP_VERSION, type AcpObjectKey, type Kind } from './constants.js';

import type * as Schema from './envelope-schema.gen.js';

/*
 * The envelope model. Every object type comes from schemas/acpspec-envelope-0.1.schema.json through the
 * generated envelope-schema.gen.ts (`npm run gen:types`; a test fails when that file is stale). What the
 * generator cannot express — the schema's `if`/`then`/`else` telling a snapshot from a delta, and a patch
 * operation's `value` required except for `remove` — is written here on top of the generated types, and
 * test/acpspec/envelope-types.test.ts checks both against the generated root type.
 */

/** Integer minor units plus ISO 4217 currency. */
export type Money = Schema.Money;
/** Who produced an envelope. */
export type Producer = Schema.Producer;
export type AcpTransaction = Schema.Transaction;
export type AcpAddress = Schema.Address;
export type AcpParty = Schema.Party;
export type ConsentRecord = Schema.ConsentRecord;
/** Consent per party id, per scope. */
export type ConsentMap = Record<string, Schema.PartyConsent>;
export type AcpVehicle = Schema.Vehicle;
export type AcpQuote = Schema.Quote;
export type AcpFinancing = Schema.Financing;
export type AcpFulfillment = Schema.Fulfillment;
/** One entry of the append-only event stream. `subject` is a JSON Pointer into the state. */
export type AcpEvent = Schema.Event;

/** Fields every envelope carries. */
export type EnvelopeHeader = Pick<
  Schema.EnvelopeSchema,
  'acp_version' | 'envelope_id' | 'transaction_id' | 'produced_at' | 'producer'
>;

/** The eight top-level objects: the complete transaction state (all required in a snapshot). */
export type AcpState = { [K in AcpObjectKey]-?: Exclude<Schema.EnvelopeSchema[K], undefined> };

/** An RFC 6902 operation as the envelope allows it (no move/copy; `value` for every op but `remove`). */
export type PatchOperation =
  | { op: Exclude<Schema.PatchOperation['op'], 'remove'>; path: string; value: unknown }
  | { op: Extract<Schema.PatchOperation['op'], 'remove'>; path: string };

/** A snapshot: the complete state, no parent, no patch. */
export type SnapshotEnvelope = EnvelopeHeader & AcpState & { parent_envelope_id?: never; patch?: never };

/** A delta: an RFC 6902 patch over the parent's resulting state. */
export type DeltaEnvelope = EnvelopeHeader & { parent_envelope_id: string; patch: PatchOperation[] };

/** Either kind; told apart only by `parent_envelope_id` (seed). */
export type Envelope = SnapshotEnvelope | DeltaEnvelope;

/** The acknowledgement of an ingested envelope (docs/acpspec-binding.md "A2A binding": `acp_ack`). */
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
export function buildSnapshot(
  input: SnapshotInput,
  options?: { clock?: Clock; ids?: IdSource },
): SnapshotEnvelope {
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

/**
 * The envelope's kind as a metric label, told apart as the seed does (by `parent_envelope_id`), also for
 * an envelope that fails validation; `other` for a body that is no JSON object (a bounded set).
 */
export function kindLabel(raw: unknown): Kind | 'other' {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'other';
  return 'parent_envelope_id' in raw ? 'delta' : 'snapshot';
}

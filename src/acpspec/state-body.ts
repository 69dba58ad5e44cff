import { LocalError } from '../shared/errors.js';
import { canonicalJson, canonicalJsonShared } from '../shared/jcs.js';
import { isJsonObject } from '../shared/json.js';
import { ACP_OBJECT_KEYS, type AcpObjectKey } from './constants.js';
import type { AcpEvent, AcpState, Producer, SnapshotEnvelope } from './envelope.js';
import { isStoredEvents, isStoredProducer, isStoredStateObject } from './validate.js';

/**
 * The part of a state snapshot that changes only when an envelope changes one of the seven objects other
 * than `events` (or the receiver's own header): what the store keeps apart from the event stream, so
 * appending an event never rewrites it (docs/acpspec-core.md "Ingest path").
 */
export interface StateBody extends Omit<AcpState, 'events'> {
  acp_version: string;
  producer: Producer;
}

/** What identifies one state snapshot: its id, its transaction and when it was produced. */
export interface StateMeta {
  envelopeId: string;
  transactionId: string;
  producedAt: string;
}

const BODY_OBJECT_KEYS = ACP_OBJECT_KEYS.filter((key) => key !== 'events');

/** The body of a state (header fields the receiver chose, the seven objects). */
export function stateBodyOf(header: { acp_version: string; producer: Producer }, state: AcpState): StateBody {
  const { events: _events, ...objects } = state;
  return { acp_version: header.acp_version, producer: header.producer, ...objects };
}

/** Whether two states have the same body objects (by identity: states are copied on write, never mutated). */
export function sameBodyObjects(a: AcpState, b: AcpState): boolean {
  return BODY_OBJECT_KEYS.every((key) => a[key] === b[key]);
}

/** Canonical (RFC 8785) text of a body, reusing the memo's texts of unchanged subtrees. */
export function encodeStateBody(body: StateBody, memo: WeakMap<object, string>): string {
  return canonicalJsonShared(body, memo);
}

/**
 * Decodes a stored body: JSON, then each member checked against its schema.
 * @throws LocalError `INVALID_STATE` when it does not decode.
 */
export function decodeStateBody(text: string): StateBody {
  const record = parseJson(text);
  if (!isJsonObject(record)) throw invalid('state body');
  const { acp_version, producer } = record;
  if (typeof acp_version !== 'string' || !isStoredProducer(producer)) throw invalid('state body');
  const member = <K extends AcpObjectKey>(key: K): AcpState[K] => {
    const value = record[key];
    if (!isStoredStateObject(key, value)) throw invalid('state body');
    return value;
  };
  return {
    acp_version,
    producer,
    transaction: member('transaction'),
    parties: member('parties'),
    consent: member('consent'),
    vehicles: member('vehicles'),
    quote: member('quote'),
    financing: member('financing'),
    fulfillment: member('fulfillment'),
  };
}

/**
 * Decodes stored events (each its canonical JSON text), checked against the event schema: one parse and one
 * check for the whole list.
 * @throws LocalError `INVALID_STATE`.
 */
export function decodeStoredEvents(texts: readonly string[]): AcpEvent[] {
  const value = parseJson(`[${texts.join(',')}]`);
  if (!isStoredEvents(value) || value.length !== texts.length) throw invalid('event');
  return value;
}

/** The state snapshot envelope made of its parts. */
export function composeSnapshot(meta: StateMeta, body: StateBody, events: AcpEvent[]): SnapshotEnvelope {
  const { acp_version, producer, ...objects } = body;
  return {
    acp_version,
    envelope_id: meta.envelopeId,
    transaction_id: meta.transactionId,
    produced_at: meta.producedAt,
    producer,
    ...objects,
    events,
  };
}

/** A state snapshot as its parts: what identifies it, its body and the canonical texts of its events. */
export interface StateParts {
  meta: StateMeta;
  body: StateBody;
  /** The canonical texts of the events, in stream order. */
  eventTexts: readonly string[];
}

/**
 * The canonical (RFC 8785) text of the state snapshot made of its parts, without serialising the event
 * stream again: `eventTexts` MUST be the canonical texts of the events (the store writes them so). Equal to
 * `canonicalJson(composeSnapshot(meta, body, events))`, member by member in RFC 8785 order. `memo` holds the
 * canonical texts of body subtrees by identity (see {@link encodeStateBody}).
 */
export function composeStateText(
  { meta, body, eventTexts }: StateParts,
  memo: WeakMap<object, string>,
): string {
  const members = new Map<string, string>([['events', `[${eventTexts.join(',')}]`]]);
  const header = {
    envelope_id: meta.envelopeId,
    transaction_id: meta.transactionId,
    produced_at: meta.producedAt,
  };
  for (const [key, value] of Object.entries(header)) members.set(key, canonicalJson(value));
  for (const [key, value] of Object.entries(body)) members.set(key, canonicalJsonShared(value, memo));
  // RFC 8785 §3.2.3: members sorted by key in UTF-16 code units (string `<`); every key here is ASCII.
  return `{${[...members]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, text]) => `${canonicalJson(key)}:${text}`)
    .join(',')}}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new LocalError('INVALID_STATE', 'a stored ACPspec state part is not JSON', { cause });
  }
}

function invalid(what: string): LocalError {
  return new LocalError('INVALID_STATE', `a stored ACPspec ${what} does not match the envelope schema`);
}

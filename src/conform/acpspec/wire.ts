import { ACP_PART_KEYS } from '../../acpspec/constants.js';
import { isJsonObject } from '../../shared/json.js';
import { clip } from './outcome.js';

/**
 * What an agent answered one ACPspec request with, as the checks read it: an `acp_ack`, an `acp_error`
 * with its code, some other ACPspec data (a state answer), or something outside the binding altogether.
 */
export type AcpReply =
  | { readonly kind: 'ack'; readonly stateEnvelopeId: string }
  | { readonly kind: 'error'; readonly code: string }
  | {
      readonly kind: 'data';
      readonly data: Record<string, unknown>;
      /** The bytes on the wire (HTTPS only; A2A re-serialises the part). */
      readonly bytes?: Buffer;
    }
  | { readonly kind: 'other'; readonly evidence: string };

/** One binding of an agent under test, as the wire checks drive it. */
export interface AcpWire {
  /** `a2a` or `https`, for evidence. */
  readonly name: string;
  /** Sends one envelope (any JSON: the checks send invalid ones too). */
  send(envelope: unknown): Promise<AcpReply>;
  /** Asks for a transaction's current state. */
  state(transactionId: string): Promise<AcpReply>;
  /** The transaction's event stream as this binding lets a reader see it. */
  events(transactionId: string): Promise<unknown[] | AcpReply>;
}

/** Reads an ACPspec reply body (the A2A part's data, or the HTTPS body). */
export function classify(body: unknown): AcpReply {
  if (!isJsonObject(body)) return { kind: 'other', evidence: 'the answer is not a JSON object' };
  const ack = body[ACP_PART_KEYS.ack];
  if (ack !== undefined) {
    const id = isJsonObject(ack) ? ack['state_envelope_id'] : undefined;
    return typeof id === 'string'
      ? { kind: 'ack', stateEnvelopeId: id }
      : { kind: 'other', evidence: 'an acp_ack without state_envelope_id' };
  }
  const error = body[ACP_PART_KEYS.error];
  if (error !== undefined) {
    const code = isJsonObject(error) ? error['code'] : undefined;
    return typeof code === 'string'
      ? { kind: 'error', code }
      : { kind: 'other', evidence: 'an acp_error without a code' };
  }
  return { kind: 'data', data: body };
}

/** A reply in a few words, for evidence. */
export function describe(reply: AcpReply | unknown[]): string {
  if (Array.isArray(reply)) return `an event list of ${reply.length}`;
  switch (reply.kind) {
    case 'ack':
      return 'an acp_ack';
    case 'error':
      return `acp_error ${reply.code}`;
    case 'data':
      return 'ACPspec data (no ack, no error)';
    case 'other':
      return clip(reply.evidence);
  }
}

import type { Message, Part } from '@a2a-js/sdk';
import { ACP_HEADER_KEYS, ACP_MEDIA_TYPE, ACP_OBJECT_KEYS, ACP_PART_KEYS } from '../../acpspec/constants.js';
import { AcpError } from '../../acpspec/errors.js';
import { isJsonObject } from '../../shared/json.js';
import {
  decodeMessage,
  encodeAgentMessage,
  encodeDataPart,
  partMediaType,
  type InboundMessage,
  type InboundPart,
} from '../part-codec.js';

/** Keys of an ACPspec envelope; once a message is claimed, any of them in metadata is a flattened envelope. */
const ENVELOPE_KEYS: readonly string[] = [...ACP_HEADER_KEYS, ...ACP_OBJECT_KEYS, 'patch'];
const MEDIA_TYPES = new Set(['', ACP_MEDIA_TYPE, 'application/json']);

function hasEnvelopeKeys(value: unknown): boolean {
  return isJsonObject(value) && Object.keys(value).some((k) => ENVELOPE_KEYS.includes(k));
}

/**
 * A strong ACPspec marker: the state request, or an envelope's `acp_version` together with its
 * `envelope_id`. Generic names alone (`transaction_id`, `quote`, `events`, `parties`, …) are ordinary
 * vocabulary that other executors' messages use too, so they never claim a message.
 */
function hasStrongMarker(value: unknown): boolean {
  if (!isJsonObject(value)) return false;
  return ACP_PART_KEYS.stateRequest in value || ('acp_version' in value && 'envelope_id' in value);
}

/**
 * True for a part that carries (or tries to carry) ACPspec content: any part labelled with the ACPspec
 * media type — an envelope sent as text or a file is claimed so that it is refused as non-conformant
 * instead of reaching another executor — or a data part with a strong marker (a v0.3 data part cannot
 * carry a media type).
 */
function isAcpPart(part: InboundPart): boolean {
  if (partMediaType(part) === ACP_MEDIA_TYPE) return true;
  return part.kind === 'data' && hasStrongMarker(part.data);
}

/**
 * True when a message is meant for the ACPspec binding: an ACPspec part, or a strong marker flattened into
 * the metadata. A message claimed this way is then held to the binding's rules by {@link readAcpMessage}.
 */
export function carriesAcp(message: InboundMessage): boolean {
  return message.parts.some(isAcpPart) || hasStrongMarker(message.metadata);
}

/** What an inbound ACPspec message asks for. */
export type AcpInbound =
  { kind: 'envelope'; envelope: unknown } | { kind: 'state-request'; transactionId: string };

/**
 * Reads the one ACPspec message of an A2A message (seed "One Envelope, One DataPart"): exactly one part,
 * a data part, holding a whole envelope — or the state request, the binding's one non-envelope message.
 * Two envelopes, an envelope split across parts, fields flattened into metadata or another part: all
 * non-conformant.
 * @throws AcpError `ACP_MESSAGE_NONCONFORMANT`.
 */
export function readAcpMessage(message: InboundMessage): AcpInbound {
  // Annotated so that a call narrows like a `throw` does.
  const refuse: (detail: string) => never = (detail) => {
    throw new AcpError('ACP_MESSAGE_NONCONFORMANT', undefined, { details: { detail } });
  };
  if (hasEnvelopeKeys(message.metadata))
    refuse('envelope fields must not be flattened into message metadata');
  const [part] = message.parts;
  if (message.parts.length !== 1 || part === undefined)
    refuse('a message carries exactly one envelope in exactly one data part');
  if (part.kind !== 'data') refuse('the envelope must travel as a data part');
  const data = part.data;
  if (!MEDIA_TYPES.has(partMediaType(part))) refuse(`the data part's media type must be ${ACP_MEDIA_TYPE}`);
  if (!isJsonObject(data)) refuse('the data part must hold a JSON object');
  const root = data;
  if (ACP_PART_KEYS.stateRequest in root) {
    const request = root[ACP_PART_KEYS.stateRequest];
    if (
      Object.keys(root).length !== 1 ||
      !isJsonObject(request) ||
      typeof request.transaction_id !== 'string' ||
      request.transaction_id === ''
    ) {
      refuse('a state request is exactly {"acp_state_request": {"transaction_id": "…"}}');
    }
    return { kind: 'state-request', transactionId: request.transaction_id };
  }
  if (ACP_PART_KEYS.ack in root || ACP_PART_KEYS.error in root)
    refuse('acp_ack and acp_error are replies, not requests');
  return { kind: 'envelope', envelope: root };
}

/** The data part for an ACPspec payload (an envelope, a state request, an ack or an error). */
export function acpPart(data: object): Part {
  return encodeDataPart(data, ACP_MEDIA_TYPE);
}

/** An agent message with one ACPspec data part. */
export function acpAgentMessage(data: object, messageId: string): Message {
  return encodeAgentMessage({ messageId, parts: [acpPart(data)] });
}

/** The data of the single ACPspec part of a reply (client side), or undefined. */
export function acpReplyData(message: Message): Record<string, unknown> | undefined {
  const decoded = decodeMessage(message);
  const part = decoded.parts[0];
  if (decoded.parts.length !== 1 || part?.kind !== 'data' || !isJsonObject(part.data)) return undefined;
  return part.data;
}

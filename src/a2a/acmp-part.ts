import { Message, type Part } from '@a2a-js/sdk';
import { ACMP_MEDIA_TYPE } from '../acmp/wire/constants.js';
import { AcmpError, ACMP_CODE } from '../acmp/wire/errors.js';
import { parseAcmpRoot, type AcmpRoot } from '../acmp/wire/messages.js';
import { isJsonObject } from '../shared/json.js';
import {
  decodeMessage,
  encodeAgentMessage,
  encodeDataPart,
  partMediaType,
  type InboundMessage,
  type InboundPart,
} from './part-codec.js';

const ROOT_KEYS = ['acmp_method', 'acmp_result', 'acmp_error'];

/** True for a part that carries (or tries to carry) an ACMP message. */
export function isAcmpPart(part: InboundPart): boolean {
  // Any part labelled ACMP is ours (a text, file or empty one is then refused with -32600).
  if (partMediaType(part) === ACMP_MEDIA_TYPE) return true;
  if (part.kind !== 'data') return false;
  const root = part.data;
  return isJsonObject(root) && ROOT_KEYS.some((k) => k in root);
}

/**
 * Reads the one ACMP message of an A2A message (A2A binding §1): exactly one part, a data part, whose
 * media type is `application/acmp+json` — or empty when the client speaks A2A v0.3, whose data parts have
 * no media type field — and whose root is a valid ACMP root.
 * @throws AcmpError -32600 for a message that is not exactly one conforming ACMP part, or the codes of
 *   {@link parseAcmpRoot}.
 */
export function readAcmpMessage(message: InboundMessage, wireVersion: string): AcmpRoot {
  const [part] = message.parts;
  if (message.parts.length !== 1 || part === undefined) {
    throw new AcmpError(ACMP_CODE.invalidRequest, { detail: 'an ACMP message is exactly one data part' });
  }
  if (part.kind !== 'data')
    throw new AcmpError(ACMP_CODE.invalidRequest, { detail: 'the ACMP part must be a data part' });
  const mediaType = partMediaType(part);
  const legacyUntyped = mediaType === '' && wireVersion.startsWith('0.');
  // A2A binding §1: media_type MUST be application/acmp+json on every data Part carrying ACMP.
  if (mediaType !== ACMP_MEDIA_TYPE && !legacyUntyped) {
    throw new AcmpError(ACMP_CODE.invalidRequest, { detail: `media type must be ${ACMP_MEDIA_TYPE}` });
  }
  return parseAcmpRoot(part.data);
}

/** The data part for an ACMP root (A2A binding §1). */
export function acmpPart(root: object): Part {
  return encodeDataPart(root, ACMP_MEDIA_TYPE);
}

/** Where an agent message belongs: its id, and its task and context (none when omitted). */
export interface AgentMessageIds {
  readonly messageId: string;
  readonly taskId?: string;
  readonly contextId?: string;
}

/** An agent message carrying one ACMP root. */
export function acmpAgentMessage(root: object, ids: AgentMessageIds): Message {
  const { messageId, taskId, contextId } = ids;
  return encodeAgentMessage({ messageId, taskId, contextId, parts: [acmpPart(root)] });
}

/** The ACMP root of a message the provider sent, or undefined when it carries none (buyer side). */
export function acmpRootOf(message: Message | undefined): AcmpRoot | undefined {
  if (!message) return undefined;
  const decoded = decodeMessage(message);
  const part = decoded.parts[0];
  if (decoded.parts.length !== 1 || part === undefined || !isAcmpPart(part) || part.kind !== 'data')
    return undefined;
  return parseAcmpRoot(part.data);
}

/** The stored form of the invoke message: its ProtoJSON text. */
export function encodeRequest(message: Message): string {
  return JSON.stringify(Message.toJSON(message));
}

/** The A2A message stored as a request; `undefined` when there is none or the text is not one. */
export function decodeRequest(text: string): Message | undefined {
  if (text === '') return undefined;
  try {
    const json: unknown = JSON.parse(text);
    // fromJSON fills in defaults for any object: only a message with an id is one (A2A §4.1.4).
    const id = isJsonObject(json) ? json.messageId : undefined;
    return typeof id === 'string' && id !== '' ? Message.fromJSON(json) : undefined;
  } catch {
    return undefined;
  }
}

import { Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import { isJsonObject } from '../shared/json.js';

/**
 * The one place that reads and builds SDK parts and messages (STYLE.md "Boundaries"). Core code sees
 * {@link InboundPart}/{@link InboundMessage}, never the SDK's `Part` with its `any`-typed data.
 */

/** A part as the bindings see it. `mediaType` is '' when the sender gave none (v0.3 data parts cannot). */
export type InboundPart =
  | { kind: 'data'; data: unknown; mediaType: string; metadata: Record<string, unknown> | undefined }
  | { kind: 'text'; text: string; mediaType: string }
  | { kind: 'file'; mediaType: string }
  | { kind: 'empty'; mediaType: string };

/** A message as the bindings see it. */
export interface InboundMessage {
  messageId: string;
  /** '' when absent. */
  taskId: string;
  contextId: string;
  role: 'user' | 'agent' | 'unspecified';
  parts: InboundPart[];
  metadata: Record<string, unknown> | undefined;
  extensions: string[];
}

/** Reads an SDK part. */
function decodePart(part: Part): InboundPart {
  const content = part.content;
  switch (content?.$case) {
    case 'data':
      return {
        kind: 'data',
        data: content.value as unknown,
        mediaType: part.mediaType ?? '',
        metadata: part.metadata,
      };
    case 'text':
      return { kind: 'text', text: content.value, mediaType: part.mediaType ?? '' };
    case 'raw':
    case 'url':
      return { kind: 'file', mediaType: part.mediaType ?? '' };
    case undefined:
      // A part without content keeps its media type, so a binding can still refuse it with its own code.
      return { kind: 'empty', mediaType: part.mediaType ?? '' };
  }
}

/**
 * Reads an SDK message. A role the SDK could not map (`UNRECOGNIZED`, which is what `Message.fromJSON`
 * makes of the v0.3 spelling `"user"`) is treated as the client's: only clients send messages to a server.
 * The inbound normaliser fixes the spelling before the SDK parses it, so this is the last line of defence.
 */
export function decodeMessage(message: Message): InboundMessage {
  return {
    messageId: message.messageId,
    taskId: message.taskId,
    contextId: message.contextId,
    role:
      message.role === Role.ROLE_AGENT
        ? 'agent'
        : message.role === Role.ROLE_UNSPECIFIED
          ? 'unspecified'
          : 'user',
    parts: message.parts.map(decodePart),
    metadata: message.metadata,
    extensions: message.extensions ?? [],
  };
}

/** Builds a data part. */
export function encodeDataPart(data: unknown, mediaType = ''): Part {
  return { content: { $case: 'data', value: data }, metadata: undefined, filename: '', mediaType };
}

/** Builds a text part. */
export function encodeTextPart(text: string, mediaType = 'text/plain'): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType };
}

/** Builds an agent message. */
export function encodeAgentMessage(options: {
  messageId: string;
  parts: Part[];
  taskId?: string;
  contextId?: string;
}): Message {
  return {
    messageId: options.messageId,
    taskId: options.taskId ?? '',
    contextId: options.contextId ?? '',
    role: Role.ROLE_AGENT,
    parts: options.parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** Builds a user (client) message, as the buyer and sender clients send them. */
export function encodeUserMessage(options: {
  messageId: string;
  parts: Part[];
  taskId?: string;
  contextId?: string;
  extensions?: string[];
}): Message {
  return {
    messageId: options.messageId,
    taskId: options.taskId ?? '',
    contextId: options.contextId ?? '',
    role: Role.ROLE_USER,
    parts: options.parts,
    metadata: undefined,
    extensions: options.extensions ?? [],
    referenceTaskIds: [],
  };
}

/** Which parser the SDK will run on the message. */
export type InboundDialect = 'v1' | 'v0.3-jsonrpc' | 'v0.3-rest';

const ROLE_SPELLINGS: ReadonlyMap<string, string> = new Map([
  ['user', 'ROLE_USER'],
  ['agent', 'ROLE_AGENT'],
]);
/** The ProtoJSON spelling of a v0.3 role; anything else (`constructor` included) as it is. */
const protoRole = (role: string): string => ROLE_SPELLINGS.get(role) ?? role;

/**
 * Normalises a raw inbound message (JSON, before the SDK parses it) so every accepted spelling reaches
 * the SDK in the form its parser reads:
 * - v1.0 requests: the v0.3 role spellings `"user"`/`"agent"` become `ROLE_USER`/`ROLE_AGENT` (the SDK
 *   would map them to UNRECOGNIZED); v0.3 `kind`-tagged parts become ProtoJSON parts (`kind:"file"`
 *   becomes `url`/`raw` with its `mimeType` as `mediaType`). `media_type`, `message_id`, `task_id` are
 *   read by the SDK's own parser.
 * - v0.3 JSON-RPC requests: a part without `kind` gets the kind its content implies (seed 000's example
 *   has none), and the ProtoJSON `role` spellings become v0.3 ones, so the compat translator accepts it.
 * - v0.3 REST requests carry the v0.3 proto's JSON (`ROLE_USER`, `content`): only the role is mapped.
 * Returns a new object; the input is not changed. Non-objects are returned as they are (the SDK rejects
 * them with its own coded error).
 */
export function normalizeInboundMessageJson(message: unknown, dialect: InboundDialect): unknown {
  if (!isJsonObject(message)) return message;
  const out: Record<string, unknown> = { ...message };
  if (dialect === 'v0.3-rest') {
    if (typeof out.role === 'string') out.role = protoRole(out.role);
    return out;
  }
  const wire = dialect === 'v1' ? 'v1' : 'v0.3';
  if (typeof out.role === 'string') {
    if (wire === 'v1') out.role = protoRole(out.role);
    else if (out.role === 'ROLE_USER') out.role = 'user';
    else if (out.role === 'ROLE_AGENT') out.role = 'agent';
  }
  if (wire === 'v0.3') {
    if (out.messageId === undefined && typeof out.message_id === 'string') out.messageId = out.message_id;
    if (out.taskId === undefined && typeof out.task_id === 'string') out.taskId = out.task_id;
    if (out.contextId === undefined && typeof out.context_id === 'string') out.contextId = out.context_id;
    if (out.kind === undefined) out.kind = 'message';
  }
  if (Array.isArray(out.parts)) out.parts = out.parts.map((p) => normalizePartJson(p, wire));
  return out;
}

function normalizePartJson(part: unknown, wire: 'v1' | 'v0.3'): unknown {
  if (!isJsonObject(part)) return part;
  const mediaType = part.mediaType ?? part.media_type;
  if (wire === 'v0.3') {
    if (part.kind !== undefined) return part;
    const metadata = isJsonObject(part.metadata) ? { ...part.metadata } : {};
    if (typeof mediaType === 'string') metadata.mediaType = mediaType;
    const withMeta = Object.keys(metadata).length > 0 ? { metadata } : {};
    if ('data' in part) return { kind: 'data', data: part.data, ...withMeta };
    if ('text' in part) return { kind: 'text', text: part.text, ...withMeta };
    return part;
  }
  if (part.kind === 'data' || part.kind === 'text') {
    const { kind: _kind, ...rest } = part;
    return rest;
  }
  if (part.kind === 'file' && isJsonObject(part.file)) {
    const file = part.file;
    const base = { metadata: part.metadata, filename: file.name, mediaType: file.mimeType };
    if (typeof file.uri === 'string') return { ...base, url: file.uri };
    if (typeof file.bytes === 'string') return { ...base, raw: file.bytes };
  }
  return part;
}

/** The media type of a v0.3 data part, carried in its metadata by {@link normalizeInboundMessageJson}. */
export function partMediaType(part: InboundPart): string {
  if (part.mediaType !== '') return part.mediaType;
  if (part.kind === 'data' && typeof part.metadata?.mediaType === 'string') return part.metadata.mediaType;
  return '';
}

/** A task state as its short lower-case name (`completed`, `working`, …) for transcripts and logs. */
export function taskStateName(state: TaskState | undefined): string {
  return state === undefined ? 'unknown' : TaskState[state].replace('TASK_STATE_', '').toLowerCase();
}

/** True when the task reached the completed state. */
export function isCompleted(state: TaskState | undefined): boolean {
  return state === TaskState.TASK_STATE_COMPLETED;
}

/**
 * A2A §3.2.4 history length semantics on a task being returned: undefined → all, 0 → none, N → the N
 * most recent messages.
 */
export function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || historyLength >= task.history.length) return task;
  return { ...task, history: historyLength <= 0 ? [] : task.history.slice(-historyLength) };
}

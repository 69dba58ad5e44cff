import { ACMP_MEDIA_TYPE } from '../../acmp/wire/constants.js';
import { isJsonObject } from '../../shared/json.js';
import type { WireExchange, WireFrame } from './wire.js';

/**
 * Readers of what an agent answered over A2A v1.0 (ProtoJSON): the messages in a frame, the ACMP data
 * parts in them — recognised by their root key whatever their media type, so a wrong media type is
 * reported by the check for it and nowhere else.
 */

type Json = Record<string, unknown>;

/** A message as found in a reply, with the id of the task it is part of (when inside one). */
export interface SeenMessage {
  readonly message: Json;
  /** `task`, `message`, `statusUpdate`, `history`: where in the frame it was. */
  readonly where: string;
  readonly enclosingTaskId?: string | undefined;
}

/** An ACMP data part and the message carrying it. */
export interface SeenPart {
  readonly part: Json;
  readonly root: Json;
  readonly message: SeenMessage;
}

const ROOT_KEYS = ['acmp_method', 'acmp_result', 'acmp_error'];

const obj = (value: unknown): Json | undefined => (isJsonObject(value) ? value : undefined);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The result object of a JSON-RPC frame (`{task}`, `{message}`, `{statusUpdate}`, …), if any. */
function resultOf(frame: WireFrame): Json | undefined {
  return obj(frame.body.result);
}

/** The task or status update a frame carries: its id, state and metadata. */
export function taskOf(frame: WireFrame): { id?: string; state?: string; object: Json } | undefined {
  const result = resultOf(frame);
  const task = obj(result?.task);
  if (task) return { id: str(task.id), state: str(obj(task.status)?.state), object: task };
  const update = obj(result?.statusUpdate);
  if (update) return { id: str(update.taskId), state: str(obj(update.status)?.state), object: update };
  return undefined;
}

/** Every message of a frame: a direct reply, a task's status message and history, an update's message. */
function messagesOf(frame: WireFrame): SeenMessage[] {
  const result = resultOf(frame);
  const seen: SeenMessage[] = [];
  const direct = obj(result?.message);
  if (direct) seen.push({ message: direct, where: 'message' });
  const task = taskOf(frame);
  const status = obj(obj(task?.object.status)?.message);
  if (task && status) seen.push({ message: status, where: 'status', enclosingTaskId: task.id });
  const history = task && Array.isArray(task.object.history) ? task.object.history : [];
  for (const m of history) {
    const message = obj(m);
    if (message) seen.push({ message, where: 'history', enclosingTaskId: task?.id });
  }
  return seen;
}

/** The root object of a part when it is an ACMP data part (by root key or media type). */
function acmpRoot(part: Json): Json | undefined {
  const data = obj(part.data);
  if (!data) return undefined;
  if (ROOT_KEYS.some((k) => k in data) || mediaTypeOf(part) === ACMP_MEDIA_TYPE) return data;
  return undefined;
}

/** A part's media type in either ProtoJSON spelling. */
export function mediaTypeOf(part: Json): string | undefined {
  return str(part.mediaType) ?? str(part.media_type);
}

/** Every ACMP data part in the frames of some exchanges. */
export function acmpParts(exchanges: readonly WireExchange[]): SeenPart[] {
  const parts: SeenPart[] = [];
  for (const exchange of exchanges)
    for (const frame of exchange.frames)
      for (const message of messagesOf(frame)) {
        const list = Array.isArray(message.message.parts) ? message.message.parts : [];
        for (const p of list) {
          const part = obj(p);
          const root = part && acmpRoot(part);
          if (part && root) parts.push({ part, root, message });
        }
      }
  return parts;
}

/** The ACMP roots an agent sent (its own messages: direct replies, status messages), in arrival order. */
export function agentRoots(exchange: WireExchange): { root: Json; frame: WireFrame }[] {
  const roots: { root: Json; frame: WireFrame }[] = [];
  for (const frame of exchange.frames)
    for (const seen of messagesOf(frame)) {
      if (seen.where === 'history') continue;
      for (const p of Array.isArray(seen.message.parts) ? seen.message.parts : []) {
        const part = obj(p);
        const root = part && acmpRoot(part);
        if (root) roots.push({ root, frame });
      }
    }
  return roots;
}

/** The final ACMP answer of an exchange (`acmp_result` or `acmp_error` root), and the frame it came in. */
export function finalAnswer(
  exchange: WireExchange,
): { result?: Json; error?: Json; frame: WireFrame; state?: string | undefined } | undefined {
  const roots = agentRoots(exchange);
  for (let i = roots.length - 1; i >= 0; i--) {
    const entry = roots[i];
    if (!entry) continue;
    const result = obj(entry.root.acmp_result);
    const error = obj(entry.root.acmp_error);
    if (result || error)
      return {
        ...(result ? { result } : {}),
        ...(error ? { error } : {}),
        frame: entry.frame,
        state: taskOf(entry.frame)?.state,
      };
  }
  return undefined;
}

/** An array field as `unknown[]` (empty when it is not an array). */
export function list(value: unknown): unknown[] {
  const items: unknown[] = Array.isArray(value) ? value : [];
  return items;
}

/** A one-line, bounded rendering of a JSON value for evidence. */
export function brief(value: unknown, max = 300): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

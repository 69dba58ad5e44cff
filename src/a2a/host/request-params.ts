import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { isJsonObject } from '../../shared/json.js';
import { wireOf } from './http-front.js';
import { hasJsonBody } from './json-body.js';
import { restSegments, validRequestId } from './request-edge.js';
import { checkV03Params } from './v03-params.js';
import { checkWireId, judgeRequest } from './wire-limits.js';
import { sendHostError } from './wire-errors.js';

/**
 * The params half of the edge, after the inbound normaliser: what the SDK will decode, decoded once here
 * first, so that a shape its decoders choke on (`"parts": [null]` throws a TypeError whose text the SDK
 * would put on the wire) and ids beyond the limits (src/a2a/host/wire-limits.ts) are refused with -32602 / 400
 * before the SDK or a store sees them.
 * - v1.0: the SDK's own ProtoJSON decoders (`SendMessageRequest.fromJSON`, …), then the decoded ids.
 * - v0.3 JSON-RPC: the schemas of src/a2a/host/v03-params.ts (the compat translator casts, it does not check).
 * - v0.3 HTTP+JSON: the ids, read as the SDK's v0.3 proto decoders read them.
 */
export function paramsEdge(shape: 'jsonrpc' | 'rest'): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasJsonBody(req) && shape === 'jsonrpc') return next();
    const problem = shape === 'jsonrpc' ? checkJsonRpcParams(req) : checkRestParams(req);
    if (problem === undefined) return next();
    const message = `Invalid params: ${problem.why}`;
    const metadata = problem.field ? { field: problem.field } : undefined;
    if (shape === 'jsonrpc')
      sendHostError(res, 'jsonrpc', {
        reason: 'INVALID_PARAMS',
        message,
        metadata,
        id: validRequestId(req.body) ?? null,
      });
    else sendHostError(res, 'rest', { reason: 'INVALID_PARAMS', message, metadata });
  };
}

const decodedSends = new WeakMap<Request, SendMessageRequest>();

/**
 * The v1.0 send (JSON-RPC `SendMessage` / `SendStreamingMessage` params, an HTTP+JSON `message:send` /
 * `message:stream` body) of a request as {@link paramsEdge} decoded and judged it (the SDK's own ProtoJSON
 * decoder), so a later step reads it without decoding again; undefined when it did not.
 */
export function decodedSendOf(req: Request): SendMessageRequest | undefined {
  return decodedSends.get(req);
}

/** Decodes a send as the SDK's v1.0 transports do, and keeps it for {@link decodedSendOf}. */
function decodeSend(req: Request, params: unknown): SendMessageRequest {
  const decoded = SendMessageRequest.fromJSON(params);
  decodedSends.set(req, decoded);
  return decoded;
}

interface ParamsProblem {
  why: string;
  field?: string;
}

/** The decoder the SDK's v1.0 JSON-RPC transport runs on each method's params. */
const V1_DECODERS: Readonly<Record<string, (params: unknown) => object>> = {
  SendMessage: (p) => SendMessageRequest.fromJSON(p),
  SendStreamingMessage: (p) => SendMessageRequest.fromJSON(p),
  GetTask: (p) => GetTaskRequest.fromJSON(p),
  ListTasks: (p) => ListTasksRequest.fromJSON(p),
  CancelTask: (p) => CancelTaskRequest.fromJSON(p),
  SubscribeToTask: (p) => SubscribeToTaskRequest.fromJSON(p),
  CreateTaskPushNotificationConfig: (p) => TaskPushNotificationConfig.fromJSON(p),
  GetTaskPushNotificationConfig: (p) => GetTaskPushNotificationConfigRequest.fromJSON(p),
  ListTaskPushNotificationConfigs: (p) => ListTaskPushNotificationConfigsRequest.fromJSON(p),
  DeleteTaskPushNotificationConfig: (p) => DeleteTaskPushNotificationConfigRequest.fromJSON(p),
  GetExtendedAgentCard: (p) => GetExtendedAgentCardRequest.fromJSON(p ?? {}),
};

function checkJsonRpcParams(req: Request): ParamsProblem | undefined {
  const body = req.body as { method: string; params?: unknown };
  if (wireOf(req) === 'v0.3') {
    const field = checkV03Params(body.method, body.params);
    return field ? { why: 'a field has the wrong type or is out of limits', field } : undefined;
  }
  const decode = Object.hasOwn(V1_DECODERS, body.method) ? V1_DECODERS[body.method] : undefined;
  // No params: the SDK answers with its own -32602; an unknown method with -32601.
  if (!decode || (body.params === undefined && body.method !== 'GetExtendedAgentCard')) return undefined;
  const send = body.method === 'SendMessage' || body.method === 'SendStreamingMessage';
  return checkDecoded(body.method, () => (send ? decodeSend(req, body.params) : decode(body.params)));
}

/**
 * Decodes as the SDK will and judges the result as the request handler will (src/a2a/host/wire-limits.ts);
 * invalid params are refused here, with the host's ErrorInfo. A lookup of an id no store could hold
 * goes on: the handler answers it TaskNotFound, as it does on every transport.
 */
function checkDecoded(method: string, decode: () => object): ParamsProblem | undefined {
  let decoded: object;
  try {
    decoded = decode();
  } catch {
    return { why: 'the request does not decode as A2A ProtoJSON' };
  }
  const judgement = judgeRequest(method, decoded);
  return judgement?.kind === 'invalid' ? { why: judgement.why } : undefined;
}

/** REST bodies the SDK decodes: SendMessage (v1.0 and v0.3) and push-config creation. */
function checkRestParams(req: Request): ParamsProblem | undefined {
  if (req.method !== 'POST') return undefined;
  const body = hasJsonBody(req) && isJsonObject(req.body) ? req.body : {};
  const segments = restSegments(req.path, wireOf(req));
  if (!segments) return undefined;
  const { route } = segments;
  if (segments.legacy) {
    if (route.length === 2 && (route[1] === 'message:send' || route[1] === 'message:stream'))
      return checkLegacyMessage(body);
    if (route.length === 4 && route[1] === 'tasks' && route[3] === 'pushNotificationConfigs')
      return checkLegacyPushConfig(body);
    return undefined;
  }
  // The v1.0 routes serve a request whatever its A2A-Version when the v0.3 routes do not match.
  if (route.length === 1 && (route[0] === 'message:send' || route[0] === 'message:stream'))
    return checkDecoded('SendMessage', () => decodeSend(req, body));
  if (route.length === 3 && route[0] === 'tasks' && route[2] === 'pushNotificationConfigs') {
    return checkDecoded('CreateTaskPushNotificationConfig', () =>
      TaskPushNotificationConfig.fromJSON({ ...body, taskId: route[1] }),
    );
  }
  return undefined;
}

/** ProtoJSON `isSet`: present and not null. */
const isSet = (value: unknown): boolean => value !== undefined && value !== null;
/** A field as the v0.3 proto decoder reads it: the camelCase spelling first, then the snake_case one, as a string. */
function legacyString(object: Record<string, unknown>, camel: string, snake: string): string {
  const value = isSet(object[camel]) ? object[camel] : object[snake];
  return isSet(value) ? String(value) : '';
}

function checkLegacyMessage(body: Record<string, unknown>): ParamsProblem | undefined {
  const message = isSet(body.message) ? body.message : body.request;
  if (!isJsonObject(message)) return undefined;
  const problem =
    checkWireId('messageId', legacyString(message, 'messageId', 'message_id')) ??
    checkWireId('contextId', legacyString(message, 'contextId', 'context_id')) ??
    checkWireId('taskId', legacyString(message, 'taskId', 'task_id'));
  if (problem) return { why: problem };
  // The v0.3 proto decoder reads each element of `content` as a Part object, and file bytes as base64 text.
  const parts: unknown[] = Array.isArray(message.content) ? message.content : [];
  if (parts.some((part) => !isJsonObject(part) || !hasTextBytes(part.file))) {
    return { why: 'each part is an object, with file bytes as base64 text', field: 'message.content' };
  }
  return undefined;
}

function hasTextBytes(file: unknown): boolean {
  if (!isJsonObject(file)) return true;
  const bytes = isSet(file.fileWithBytes) ? file.fileWithBytes : file.file_with_bytes;
  return !isSet(bytes) || typeof bytes === 'string';
}

function checkLegacyPushConfig(body: Record<string, unknown>): ParamsProblem | undefined {
  // The task id is looked up (the handler answers TaskNotFound); the config id is created.
  const config = isSet(body.pushNotificationConfig)
    ? body.pushNotificationConfig
    : body.push_notification_config;
  const configId = isJsonObject(config) ? legacyString(config, 'id', 'id') : '';
  const problem = checkWireId('configId', configId);
  return problem ? { why: problem } : undefined;
}

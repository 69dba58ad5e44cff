import type { Request } from 'express';
import { Extensions, Message, StreamResponse, Task } from '@a2a-js/sdk';
import { JsonRpcTransportHandler } from '@a2a-js/sdk/server';
import { isJsonObject } from '../../shared/json.js';
import { hasJsonBody } from './json-body.js';
import {
  EXTENSIONS_HEADER,
  LEAN_VERSION,
  setActivated,
  setSseHeaders,
  writeJson,
  type LeanCall,
  type LeanTransport,
} from './lean-invoke.js';
import { validRequestId } from './request-edge.js';
import { decodedSendOf } from './request-params.js';
import type { JsonRpcId } from './wire-errors.js';

/**
 * The JSON-RPC transport of the lean invoke path (src/a2a/host/lean-invoke.ts): A2A v1.0 §9
 * `SendMessage` and `SendStreamingMessage` on the JSON-RPC endpoint, read and written as the SDK's
 * JSON-RPC handler reads and writes them — `{"jsonrpc","id","result":{"task"|"message":…}}` through
 * `Task.toJSON` / `Message.toJSON`, errors through the SDK's own `JsonRpcTransportHandler.mapToJSONRPCError`,
 * the `A2A-Extensions` header after the call, one `data:` frame per `StreamResponse.toJSON`, a refusal
 * before the first event as a plain JSON-RPC response and a failure after it as `event: error`.
 */
export const leanJsonRpc: LeanTransport = {
  read,
  sent({ req, res, context }, result) {
    const body = {
      jsonrpc: '2.0',
      id: idOf(req),
      result: 'messageId' in result ? { message: Message.toJSON(result) } : { task: Task.toJSON(result) },
    };
    setActivated(res, context);
    writeJson(res, 200, body);
  },
  sendFailed({ req, res, context }, error) {
    setActivated(res, context);
    writeJson(res, 200, errorBody(idOf(req), error));
  },
  streamRefused({ req, res, context }, error, at) {
    setActivated(res, context);
    writeJson(res, 200, errorBody(at === 'call' ? idOf(req) : errorIdOf(req), error));
  },
  streamOpened({ res, context }) {
    setActivated(res, context);
    setSseHeaders(res);
  },
  frame({ req }, event) {
    return `data: ${JSON.stringify({ jsonrpc: '2.0', id: idOf(req), result: StreamResponse.toJSON(event) })}\n\n`;
  },
  errorFrame({ req }, error) {
    return `event: error\ndata: ${JSON.stringify(errorBody(errorIdOf(req), error))}\n\n`;
  },
};

/** The call when the request is a decoded v1.0 JSON-RPC send of either kind; undefined otherwise. */
function read(req: Request): LeanCall | undefined {
  if (req.method !== 'POST' || !hasJsonBody(req) || req.header('a2a-version') !== LEAN_VERSION)
    return undefined;
  const body: unknown = req.body;
  if (!isJsonObject(body)) return undefined;
  if (body.method !== 'SendMessage' && body.method !== 'SendStreamingMessage') return undefined;
  const params = decodedSendOf(req);
  // No header: no extension requested (a binding's messages then go to the SDK's path).
  const header = req.header(EXTENSIONS_HEADER);
  if (!params || header === undefined || params.message === undefined) return undefined;
  return {
    streaming: body.method === 'SendStreamingMessage',
    params,
    requestedExtensions: Extensions.parseServiceParameter(header),
    tenant: params.tenant,
  };
}

/** The request's id (the edge let only valid ids through: a string, an integer or null). */
function idOf(req: Request): JsonRpcId {
  return validRequestId(req.body) ?? null;
}

/** The id the SDK's handler writes on its own error paths: `req.body?.id || null` (an id of 0 is null). */
function errorIdOf(req: Request): JsonRpcId {
  return idOf(req) || null;
}

function errorBody(id: JsonRpcId, error: unknown): object {
  return { jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) };
}

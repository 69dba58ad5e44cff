import type { Request, Response } from 'express';
import { A2A_CONTENT_TYPE, Extensions, SendMessageResponse, StreamResponse } from '@a2a-js/sdk';
import { A2AError, restStatusFor, toRestErrorBody } from '@a2a-js/sdk/errors';
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
import { decodedSendOf } from './request-params.js';
import { internalRestError } from './sdk-scope.js';

/** The routes of the HTTP+JSON binding the lean path serves (A2A v1.0 §11.3), relative to its mount. */
export const LEAN_REST_ROUTES = { send: '/message:send', stream: '/message:stream' } as const;

/**
 * The SDK's REST handler sets `application/a2a+json` before anything else, and Express's `json` adds the
 * charset when it writes: set here at once, in the same place among the headers.
 */
const JSON_TYPE = `${A2A_CONTENT_TYPE}; charset=utf-8`;

/**
 * The HTTP+JSON transport of the lean invoke path (src/a2a/host/lean-invoke.ts): A2A v1.0 §11
 * `POST /message:send` and `POST /message:stream` (no tenant prefix: those, and every other spelling the
 * SDK's router also matches, stay on the SDK), read and written as the SDK's `restHandler` does — the
 * `SendMessageResponse` ProtoJSON, errors as its google.rpc.Status-like body with the HTTP status it maps
 * them to (A2A §11.6; a 5xx as the host's SDK scope rewrites it, src/a2a/host/sdk-scope.ts), the
 * `A2A-Extensions` header on answers but not on refusals of the call, SSE frames of bare
 * `StreamResponse` ProtoJSON and an `event: error` frame with the error body. The content type is the
 * one the SDK sets (`application/a2a+json`, which the interop middleware may rewrite).
 */
export const leanRest: LeanTransport = {
  read,
  sent({ res, context }, result) {
    // The SDK's `ToProto.messageSendResult`: a message has a `messageId`, a task its `artifacts`.
    const payload =
      'messageId' in result
        ? { $case: 'message' as const, value: result }
        : 'artifacts' in result
          ? { $case: 'task' as const, value: result }
          : undefined;
    if (!payload) throw new A2AError('Invalid SendMessageResult type');
    res.setHeader('Content-Type', JSON_TYPE);
    setActivated(res, context);
    writeJson(res, 200, SendMessageResponse.toJSON({ payload }));
  },
  sendFailed({ res }, error) {
    writeError(res, error);
  },
  streamRefused({ res, context }, error, at) {
    // A refusal of the call is the handler's error answer; one by the first event carries the header.
    res.setHeader('Content-Type', JSON_TYPE);
    if (at === 'first') setActivated(res, context);
    writeError(res, error);
  },
  streamOpened({ res, context }) {
    setSseHeaders(res);
    setActivated(res, context);
  },
  frame(_exchange, event) {
    return `data: ${JSON.stringify(StreamResponse.toJSON(event))}\n\n`;
  },
  errorFrame(_exchange, error) {
    return `event: error\ndata: ${JSON.stringify(toRestErrorBody(error, restStatusFor(error)))}\n\n`;
  },
};

/** The call when the request is a decoded v1.0 HTTP+JSON send of either kind; undefined otherwise. */
function read(req: Request): LeanCall | undefined {
  if (req.method !== 'POST' || !hasJsonBody(req) || req.header('a2a-version') !== LEAN_VERSION)
    return undefined;
  const streaming =
    req.path === LEAN_REST_ROUTES.stream ? true : req.path === LEAN_REST_ROUTES.send ? false : undefined;
  const params = decodedSendOf(req);
  // The SDK's REST transport refuses a send without a message id itself (400): that stays its answer.
  if (streaming === undefined || !params?.message?.messageId) return undefined;
  return {
    streaming,
    params,
    requestedExtensions: Extensions.parseServiceParameter(req.header(EXTENSIONS_HEADER)),
  };
}

/** An error as the SDK's REST handler answers it: the status it maps the error to, and its body. */
function writeError(res: Response, error: unknown): void {
  const status = restStatusFor(error);
  res.setHeader('Content-Type', JSON_TYPE);
  writeJson(res, status, status >= 500 ? internalRestError(status) : toRestErrorBody(error, status));
}

import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Message, SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';
import { JsonRpcTransportHandler, defaultServerCallContextBuilder } from '@a2a-js/sdk/server';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { userFromRequest } from './http-front.js';
import { FrameBatch } from './frame-batch.js';
import { hasJsonBody } from './json-body.js';
import type { CommerceRequestHandler } from './request-handler.js';
import { decodedParamsOf } from './request-params.js';
import type { JsonRpcId } from './wire-errors.js';

/** The A2A version the lean path speaks (A2A §3.6.2); any other stays on the SDK's path. */
const LEAN_VERSION = '1.0';
const EXTENSIONS_HEADER = 'A2A-Extensions';
/** The SDK's SSE response headers (its `SSE_HEADERS`), in its order. */
const SSE_HEADERS: readonly (readonly [string, string])[] = [
  ['Content-Type', 'text/event-stream'],
  ['Cache-Control', 'no-cache'],
  ['Connection', 'keep-alive'],
  ['X-Accel-Buffering', 'no'],
];

interface LeanCall {
  readonly method: 'SendMessage' | 'SendStreamingMessage';
  readonly id: JsonRpcId;
  readonly params: SendMessageRequest;
}

/**
 * The lean invoke path (docs/acmp-a2a-binding.md "The lean invoke path"): the one decision "lean or SDK",
 * made after the edge (auth, body, request object, params: the same middlewares as every A2A request,
 * mounted before this) on the params the edge decoded once. A v1.0 `SendMessage` or
 * `SendStreamingMessage` that the ACMP binding claims, with its extension requested, is answered here:
 * the host's request handler is called directly (so its own rules — judging, inline webhooks, required
 * extensions, routing, sanitising — are the same code), and the answer is written as the SDK's JSON-RPC
 * transport writes it, byte for byte. Everything else — other methods, v0.3, other versions, plain or
 * other bindings' messages, anything the edge did not decode — goes on to the SDK untouched.
 * `enabled: false` sends everything to the SDK (the golden test compares the two).
 */
export function leanInvoke(handler: CommerceRequestHandler, options: { enabled: boolean }): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const call = options.enabled ? leanCallOf(req) : undefined;
    if (!call) return next();
    const context = callContextOf(req, call);
    if (!context || !handler.isLean(call.params, context.requestedExtensions ?? [])) return next();
    userFromRequest(req)
      .then((user) => {
        // The SDK's builder, as its JSON-RPC handler calls it (the span reads the headers from its state).
        const built = defaultServerCallContextBuilder({
          extensions: context.requestedExtensions ?? [],
          user,
          headers: req.headers,
          requestedVersion: LEAN_VERSION,
        });
        const tenant = call.params.tenant;
        if (tenant) built.setTenant(tenant);
        return call.method === 'SendMessage'
          ? answer(handler, { req, res, call, context: built })
          : stream(handler, { req, res, call, context: built });
      })
      .catch(next);
  };
}

/** The call when the request is a decoded v1.0 send of either kind; undefined otherwise. */
function leanCallOf(req: Request): LeanCall | undefined {
  if (req.method !== 'POST' || !hasJsonBody(req) || req.header('a2a-version') !== LEAN_VERSION)
    return undefined;
  const body = req.body as { method?: unknown; id?: JsonRpcId };
  if (body.method !== 'SendMessage' && body.method !== 'SendStreamingMessage') return undefined;
  const params = decodedParamsOf(req);
  if (!params) return undefined;
  return { method: body.method, id: body.id ?? null, params: params as SendMessageRequest };
}

/** A context with the requested extensions only, for the decision (the SDK's parsing of the header). */
function callContextOf(
  req: Request,
  call: LeanCall,
): Pick<ServerCallContext, 'requestedExtensions'> | undefined {
  const header = req.header(EXTENSIONS_HEADER);
  if (header === undefined || call.params.message === undefined) return undefined;
  const requested = [
    ...new Set(
      header
        .split(',')
        .map((e) => e.trim())
        .filter((e) => e.length > 0),
    ),
  ];
  return { requestedExtensions: requested };
}

interface Exchange {
  readonly req: Request;
  readonly res: Response;
  readonly call: LeanCall;
  readonly context: ServerCallContext;
}

/** SendMessage: the result (or error) object as the SDK's transport builds it, then its header and body. */
async function answer(handler: CommerceRequestHandler, exchange: Exchange): Promise<void> {
  const { res, call, context } = exchange;
  let body: object;
  try {
    const result = await handler.sendMessage(call.params, context);
    body = {
      jsonrpc: '2.0',
      id: call.id,
      result: 'messageId' in result ? { message: Message.toJSON(result) } : { task: Task.toJSON(result) },
    };
  } catch (error) {
    body = { jsonrpc: '2.0', id: call.id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) };
  }
  setActivated(res, context);
  writeJson(res, body);
}

/**
 * The answer as Express's `res.status(200).json(body)` writes it on the host's app (no JSON replacer,
 * spaces or escaping, no ETag, a POST is never fresh), without its generic `send`: the status, the
 * content type (set through the response's own `setHeader`, which the interop middleware may wrap), the
 * length, one `end`.
 */
function writeJson(res: Response, body: object): void {
  const text = JSON.stringify(body);
  res.statusCode = 200;
  if (res.getHeader('Content-Type') === undefined)
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(text)));
  res.end(text);
}

/**
 * SendStreamingMessage as the SDK's JSON-RPC handler streams it: a refusal before the first event is a
 * plain JSON-RPC error response; then SSE headers, one `data:` event per StreamResponse, and an
 * `event: error` for a failure after the first event.
 */
async function stream(handler: CommerceRequestHandler, exchange: Exchange): Promise<void> {
  const { req, res, call, context } = exchange;
  let events: AsyncGenerator<StreamResponse, void, undefined>;
  try {
    events = handler.sendMessageStream(call.params, context);
  } catch (error) {
    setActivated(res, context);
    res
      .status(200)
      .json({ jsonrpc: '2.0', id: call.id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
    return;
  }
  setActivated(res, context);
  // The SDK's handler writes `req.body?.id || null` on its own error paths (so an id of 0 becomes null).
  const errorId = (req.body as { id?: JsonRpcId }).id || null;
  const frame = (event: StreamResponse): string =>
    `data: ${JSON.stringify({ jsonrpc: '2.0', id: call.id, result: StreamResponse.toJSON(event) })}\n\n`;
  let first: IteratorResult<StreamResponse, void>;
  try {
    first = await events.next();
  } catch (error) {
    res
      .status(200)
      .json({ jsonrpc: '2.0', id: errorId, error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
    return;
  }
  for (const [name, value] of SSE_HEADERS) res.setHeader(name, value);
  res.flushHeaders();
  const frames = new FrameBatch(res);
  try {
    if (!first.done) frames.push(frame(first.value));
    for (let next = await events.next(); !next.done; next = await events.next())
      frames.push(frame(next.value));
  } catch (error) {
    const failure = { jsonrpc: '2.0', id: errorId, error: JsonRpcTransportHandler.mapToJSONRPCError(error) };
    if (!res.writableEnded) frames.push(`event: error\ndata: ${JSON.stringify(failure)}\n\n`);
  } finally {
    if (res.writableEnded) frames.drop();
    else {
      frames.flush();
      res.end();
    }
  }
}

/** The SDK's response header of activated extensions (A2A §4.6), set as its handler sets it. */
function setActivated(res: Response, context: ServerCallContext): void {
  if (context.activatedExtensions) res.setHeader(EXTENSIONS_HEADER, Array.from(context.activatedExtensions));
}

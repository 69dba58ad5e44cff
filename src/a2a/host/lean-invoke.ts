import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  SSE_HEADERS,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { defaultServerCallContextBuilder } from '@a2a-js/sdk/server';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { userFromRequest } from './http-front.js';
import { FrameBatch } from './frame-batch.js';
import type { CommerceRequestHandler } from './request-handler.js';

/** The A2A version the lean path speaks (A2A §3.6.2); any other stays on the SDK's path. */
export const LEAN_VERSION = '1.0';
export const EXTENSIONS_HEADER = 'A2A-Extensions';

/** A send the transport read from a request: what the core needs to decide and to call. */
export interface LeanCall {
  readonly streaming: boolean;
  readonly params: SendMessageRequest;
  /** The client's `A2A-Extensions`, parsed as the SDK parses it. */
  readonly requestedExtensions: readonly string[];
  /** The tenant the SDK's transport puts on the call context (none: the context has none). */
  readonly tenant?: string | undefined;
}

/** One lean exchange: the request, its response, the call and the context built for it. */
export interface LeanExchange {
  readonly req: Request;
  readonly res: Response;
  readonly call: LeanCall;
  readonly context: ServerCallContext;
}

/**
 * What a transport brings to the lean path: how a call is read from a request, and how each outcome is
 * written — exactly as that transport's SDK handler writes it.
 */
export interface LeanTransport {
  /** The call when the request is a decoded v1.0 send this transport serves leanly; undefined otherwise. */
  read(req: Request): LeanCall | undefined;
  /** SendMessage's answer (may throw: then {@link sendFailed} answers). */
  sent(exchange: LeanExchange, result: Message | Task): void;
  sendFailed(exchange: LeanExchange, error: unknown): void;
  /** SendStreamingMessage refused when it is called, or by its first event: a plain response. */
  streamRefused(exchange: LeanExchange, error: unknown, at: 'call' | 'first'): void;
  /** The headers of an event stream (flushed after). */
  streamOpened(exchange: LeanExchange): void;
  frame(exchange: LeanExchange, event: StreamResponse): string;
  /** The frame of a failure after the first event. */
  errorFrame(exchange: LeanExchange, error: unknown): string;
}

/**
 * The lean invoke path (docs/acmp-a2a-binding.md "The lean invoke path"): the one decision "lean or SDK",
 * made after the edge (auth, body, request object, params: the same middlewares as every A2A request,
 * mounted before this) on the params the edge decoded once. A v1.0 `SendMessage` or
 * `SendStreamingMessage` that a binding claims (ACMP, ACPspec, escrow), with its extension requested, is answered here:
 * the host's request handler is called directly (so its own rules — judging, inline webhooks, required
 * extensions, routing, sanitising — are the same code), and the answer is written by the transport as
 * its SDK handler writes it, byte for byte. Everything else — other methods, v0.3, other versions, plain
 * or other bindings' messages, anything the edge did not decode — goes on to the SDK untouched.
 * `enabled: false` sends everything to the SDK (the golden test compares the two).
 */
export function leanInvoke(
  handler: CommerceRequestHandler,
  transport: LeanTransport,
  options: { enabled: boolean },
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const call = options.enabled ? transport.read(req) : undefined;
    if (!call || !handler.isLean(call.params, call.requestedExtensions)) return next();
    userFromRequest(req)
      .then((user) => {
        // The SDK's builder, as its transports call it (the span reads the headers from its state).
        const context = defaultServerCallContextBuilder({
          extensions: [...call.requestedExtensions],
          user,
          headers: req.headers,
          requestedVersion: LEAN_VERSION,
        });
        if (call.tenant) context.setTenant(call.tenant);
        const exchange = { req, res, call, context };
        return call.streaming ? stream(handler, transport, exchange) : answer(handler, transport, exchange);
      })
      .catch(next);
  };
}

/** SendMessage: the handler's result or error, written by the transport. */
async function answer(
  handler: CommerceRequestHandler,
  transport: LeanTransport,
  exchange: LeanExchange,
): Promise<void> {
  try {
    transport.sent(exchange, await handler.sendMessage(exchange.call.params, exchange.context));
  } catch (error) {
    transport.sendFailed(exchange, error);
  }
}

/**
 * SendStreamingMessage: a refusal before the first event is a plain response; then the stream's headers,
 * one frame per StreamResponse (a turn's frames in one write, src/a2a/host/frame-batch.ts), and an error
 * frame for a failure after the first event.
 */
async function stream(
  handler: CommerceRequestHandler,
  transport: LeanTransport,
  exchange: LeanExchange,
): Promise<void> {
  const { res, call, context } = exchange;
  let events: AsyncGenerator<StreamResponse, void, undefined>;
  try {
    events = handler.sendMessageStream(call.params, context);
  } catch (error) {
    transport.streamRefused(exchange, error, 'call');
    return;
  }
  let first: IteratorResult<StreamResponse, void>;
  try {
    first = await events.next();
  } catch (error) {
    transport.streamRefused(exchange, error, 'first');
    return;
  }
  transport.streamOpened(exchange);
  res.flushHeaders();
  const frames = new FrameBatch(res);
  try {
    if (!first.done) frames.push(transport.frame(exchange, first.value));
    for (let next = await events.next(); !next.done; next = await events.next())
      frames.push(transport.frame(exchange, next.value));
  } catch (error) {
    if (!res.writableEnded) frames.push(transport.errorFrame(exchange, error));
  } finally {
    if (res.writableEnded) frames.drop();
    else {
      frames.flush();
      res.end();
    }
  }
}

/** The SDK's SSE response headers, set as its handlers set them. */
export function setSseHeaders(res: Response): void {
  for (const [name, value] of Object.entries(SSE_HEADERS)) res.setHeader(name, value);
}

/** The SDK's response header of activated extensions (A2A §4.6), set as its handlers set it. */
export function setActivated(res: Response, context: ServerCallContext): void {
  if (context.activatedExtensions) res.setHeader(EXTENSIONS_HEADER, Array.from(context.activatedExtensions));
}

/**
 * A JSON answer as Express's `res.status(status).json(body)` writes it on the host's app (no JSON
 * replacer, spaces or escaping, no ETag, a POST is never fresh), without its generic `send`: the status,
 * the content type (Express's default unless the transport set its own, with the charset `send` adds;
 * through the response's own `setHeader`, which the interop middleware may wrap), the length, one `end`.
 */
export function writeJson(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  if (res.getHeader('Content-Type') === undefined)
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(text)));
  res.end(text);
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';

/** A Node request as the SDK's adapter reads it: `auth` is its pass-through `authInfo`. */
export type McpNodeRequest = IncomingMessage & { auth?: AuthInfo };

/** What {@link parsedBodyNodeHandler} needs besides the handler (the SDK adapter's own options). */
export interface ParsedNodeHandlerOptions {
  readonly maxRequestBodySize: number;
  readonly onerror: (error: Error) => void;
}

/**
 * The SDK's Node adapter (`toNodeHandler` of @modelcontextprotocol/node) for a body the host has already
 * read and parsed (src/mcp/http-body.ts). Given a `parsedBody`, the SDK's handler classifies and serves the
 * value and never reads the web `Request`'s body (`classifyEntryRequest`, and the legacy route it forwards
 * the value to); the adapter nevertheless serialises the value again into a body stream for a `Request`
 * nothing reads. Here the `Request` carries the method, URL, headers and the abort signal only, and the
 * response is written as the adapter writes it: its status and headers, then its body with write
 * backpressure, ended when the client goes away. A request without a parsed body (not a JSON `POST`) is the
 * SDK adapter's, unchanged.
 */
export function parsedBodyNodeHandler(
  handler: McpHttpHandler,
  options: ParsedNodeHandlerOptions,
): (req: McpNodeRequest, res: ServerResponse, parsedBody: unknown) => Promise<void> {
  const sdk = toNodeHandler(handler, options);
  return async (req, res, parsedBody) => {
    if (parsedBody === undefined) return sdk(req, res);
    let finished = false;
    const abort = new AbortController();
    res.on('close', () => {
      if (!finished) abort.abort();
    });
    if (res.destroyed) abort.abort();
    let response: Response;
    try {
      const request = new Request(urlOf(req), {
        method: req.method ?? 'POST',
        headers: headersOf(req),
        signal: abort.signal,
      });
      response = await handler.fetch(request, { ...(req.auth ? { authInfo: req.auth } : {}), parsedBody });
    } catch (error) {
      options.onerror(error instanceof Error ? error : new Error(String(error)));
      response = internalError(parsedBody);
    }
    await write(response, res, {
      closed: abort.signal,
      ending: () => {
        finished = true;
      },
    });
  };
}

/** The request's URL as the SDK adapter spells it (`http://` + Host + path). */
function urlOf(req: IncomingMessage): string {
  const host = req.headers.host ?? 'localhost';
  return `http://${host}${req.url ?? '/'}`;
}

/** The request headers as web `Headers` (HTTP/2 pseudo-headers left out, repeated ones appended). */
function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return headers;
}

/** The adapter's last-resort answer: 500 -32603 with the request's id when it has a usable one. */
function internalError(body: unknown): Response {
  const id =
    typeof body === 'object' && body !== null && !Array.isArray(body) && 'method' in body && 'id' in body
      ? body.id
      : null;
  const echoed = typeof id === 'string' || typeof id === 'number' ? id : null;
  return Response.json(
    { jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: echoed },
    { status: 500 },
  );
}

/**
 * Status, headers, then the body chunk by chunk, waiting for `drain` when the socket is full; `ending` is
 * called just before the response ends (from then on its `close` is no abort).
 */
async function write(
  response: Response,
  res: ServerResponse,
  { closed, ending }: { closed: AbortSignal; ending: () => void },
): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  if (response.body !== null && isJsonAnswer(headers)) {
    // A JSON answer is one complete message (the SDK built it from a string): sent with its length in one
    // write, not chunk by chunk with chunked transfer encoding.
    const body = Buffer.from(await response.arrayBuffer());
    headers['content-length'] = String(body.byteLength);
    res.writeHead(response.status, headers);
    ending();
    res.end(body);
    return;
  }
  res.writeHead(response.status, headers);
  if (response.body === null) {
    ending();
    res.end();
    return;
  }
  try {
    for await (const chunk of response.body) {
      if (closed.aborted) break;
      if (!res.write(chunk)) await drained(res, closed);
    }
  } catch {
    // A body that fails mid-stream ends the response, as the SDK adapter does.
  }
  ending();
  res.end();
}

function drained(res: ServerResponse, closed: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      closed.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    closed.addEventListener('abort', done, { once: true });
  });
}

/** Whether an answer is a JSON document (not an SSE stream) whose length is known once it is read. */
function isJsonAnswer(headers: Record<string, string>): boolean {
  const type = headers['content-type'];
  return type !== undefined && /^application\/json\s*(;|$)/i.test(type) && !('content-length' in headers);
}

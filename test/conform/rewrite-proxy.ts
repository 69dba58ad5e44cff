import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConformTransport } from '../../src/conform/check.js';
import { onCleanup } from '../helpers/cleanup.js';

/**
 * A man in the middle on 127.0.0.1 that breaks one rule of an agent behind it: it rewrites request
 * bodies, JSON response bodies and — event by event, keeping their timing — SSE streams. The fixture
 * agent of the conformance kit's "each check can fail" tests (docs/conformance.md).
 */

type Json = Record<string, unknown>;

/** How a proxy breaks the agent; every hook may mutate its argument or return a replacement. */
export interface Rewrites {
  /** A JSON request body (JSON-RPC or MCP), before it is forwarded. */
  request?: (body: Json, path: string) => Json;
  /** A JSON response body, or one SSE event's JSON; `undefined` drops an SSE event. */
  response?: (body: Json, path: string) => Json | undefined;
  /** The agent card. */
  card?: (card: Json) => Json;
  /**
   * The A2A transports whose calls `request` and `response` rewrite (default: all three, and MCP);
   * the card is rewritten whatever this says.
   */
  transports?: readonly ConformTransport[];
}

/** The A2A transport of an HTTP path of our host, or nothing (MCP, the card). */
function transportOf(path: string): ConformTransport | undefined {
  if (path.startsWith('/a2a/jsonrpc')) return 'JSONRPC';
  if (path.startsWith('/a2a/rest')) return 'HTTP+JSON';
  return undefined;
}

const DROPPED = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'content-encoding']);

function readAll(stream: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
}

function parse(text: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

function forwardedHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).flatMap(([k, v]) => (typeof v === 'string' && !DROPPED.has(k) ? [[k, v]] : [])),
  );
}

/** Pipes an SSE body through `rewrite`, one event at a time, as it arrives. */
async function pipeEvents(
  body: ReadableStream<Uint8Array>,
  res: ServerResponse,
  rewrite: (json: Json) => Json | undefined,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  const emit = (event: string): void => {
    const data = event
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    const json = data ? parse(data) : undefined;
    if (!json) return void res.write(`${event}\n\n`);
    const out = rewrite(json);
    if (out) res.write(`data: ${JSON.stringify(out)}\n\n`);
  };
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true }).replace(/\r/g, '');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      emit(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
    }
  }
  if (buffer.trim()) emit(buffer);
  res.end();
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  hop: { target: string; self: () => string; rewrites: Rewrites; aliases: Record<string, string> },
): Promise<void> {
  const { target } = hop;
  const path = req.url ?? '/';
  const transport = transportOf(path);
  const rewrites =
    transport && hop.rewrites.transports && !hop.rewrites.transports.includes(transport)
      ? { card: hop.rewrites.card }
      : hop.rewrites;
  let body = await readAll(req);
  const json = body ? parse(body) : undefined;
  if (json && rewrites.request) body = JSON.stringify(rewrites.request(json, path));
  const answer = await fetch(new URL(path, target), {
    method: req.method ?? 'GET',
    headers: forwardedHeaders(req.headers),
    ...(body.length > 0 ? { body } : {}),
  });
  const headers = Object.fromEntries([...answer.headers].filter(([k]) => !DROPPED.has(k)));
  const type = answer.headers.get('content-type') ?? '';
  const respond = rewrites.response ?? ((b: Json) => b);
  if (type.startsWith('text/event-stream') && answer.body) {
    res.writeHead(answer.status, headers);
    return pipeEvents(answer.body, res, (event) => respond(event, path));
  }
  let text = await answer.text();
  const isCard = path.startsWith('/.well-known/');
  // The card names the proxy's origin, so every call the kit makes passes through it.
  if (isCard) text = text.replaceAll(new URL(target).origin, hop.self());
  if (isCard) for (const [from, to] of Object.entries(hop.aliases)) text = text.replaceAll(from, to);
  let parsed = parse(text);
  if (parsed && isCard) parsed = rewrites.card ? rewrites.card(parsed) : parsed;
  else if (parsed) parsed = respond(parsed, path);
  res.writeHead(answer.status, headers).end(parsed ? JSON.stringify(parsed) : text);
}

/**
 * Starts a rewriting proxy in front of `target` (plain HTTP); closed by the tests' cleanup. `aliases`
 * replace text in the card besides the origin (the agent's gRPC address by the gRPC proxy's).
 */
export async function startRewriteProxy(
  target: string,
  rewrites: Rewrites,
  aliases: Record<string, string> = {},
): Promise<{ url: string }> {
  let self = '';
  const server = createServer((req, res) => {
    handle(req, res, { target, self: () => self, rewrites, aliases }).catch(() => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: self };
}

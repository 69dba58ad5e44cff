import type { Express, Request, RequestHandler, Response } from 'express';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { ANONYMOUS_IDENTITY } from '../shared/identity.js';
import { silentLogger } from '../shared/logger.js';
import { withRemoteContext } from '../shared/tracing.js';
import { MCP_PATH } from './acmp-extension.js';
import { createAcmpMcpFactory, type AcmpMcpServerOptions } from './provider-server.js';

/** What the host gives the endpoint (structurally the host's `HttpGuards`). */
export interface McpHttpGuards {
  /** Bearer authentication (Layer 1 §5.1), the same as on the A2A routes. */
  readonly auth: RequestHandler;
  /** The identity `auth` authenticated: the same string over every binding, so tasks are scoped alike. */
  readonly callerOf: (req: Request) => string;
  readonly bodyLimitBytes: number;
}

/** Options of {@link mountAcmpMcp}. */
export interface AcmpMcpEndpointOptions extends Omit<
  AcmpMcpServerOptions,
  'scopeOf' | 'connectionCloseCancels'
> {
  guards: McpHttpGuards;
  /** Default {@link MCP_PATH}. */
  path?: string;
}

/** The mounted endpoint, to stop with the host. */
export interface AcmpMcpEndpoint {
  /** Aborts the exchanges in flight (call after `stopping` aborted, so they detach rather than cancel). */
  close(): Promise<void>;
}

/**
 * Mounts ACMP over MCP Streamable HTTP on the host's Express app (docs/acmp-mcp-binding.md §1): the SDK's
 * per-request handler serves the 2026-07-28 revision and, statelessly, 2025-era clients; in front of it
 * the host's bearer authentication, whose caller identity scopes every task exactly as over A2A. The
 * `Origin` check MCP transports §Security requires (DNS rebinding) is the host's, in front of every route
 * (src/server/host-guard.ts).
 */
export function mountAcmpMcp(app: Express, options: AcmpMcpEndpointOptions): AcmpMcpEndpoint {
  const logger = options.logger ?? silentLogger;
  const { guards } = options;
  const factory = createAcmpMcpFactory({
    ...options,
    connectionCloseCancels: true,
    scopeOf: (context) => ({ tenant: '', agent: context.authInfo?.clientId ?? ANONYMOUS_IDENTITY }),
  });
  const onerror = (error: Error): void => logger.debug('mcp.request_rejected', { error: error.name });
  const handler = createMcpHandler(factory, {
    legacy: 'stateless',
    maxRequestBodySize: guards.bodyLimitBytes,
    onerror,
  });
  const node = toNodeHandler(handler, { maxRequestBodySize: guards.bodyLimitBytes, onerror });
  const serve = async (req: Request, res: Response): Promise<void> => {
    // The identity travels as the SDK's pass-through authInfo; the credential itself never does.
    const auth = { token: '', clientId: guards.callerOf(req), scopes: [] };
    const body = await preparsed(req, guards.bodyLimitBytes);
    // The MCP call spans (src/mcp/provider-server.ts) descend from the trace the request carries.
    await withRemoteContext(req.headers, () =>
      'parsed' in body
        ? node(Object.assign(req, { auth }), res, body.parsed)
        : node(Object.assign(body.replay, { auth }), res),
    );
  };
  app.all(options.path ?? MCP_PATH, guards.auth, (req, res) => void serve(req, res));
  return { close: () => handler.close() };
}

/**
 * A POST body read once and parsed here, handed to the SDK as its `parsedBody`: without it the SDK's Node
 * adapter copies the body into a web `Request`, which the handler then clones (a stream tee) to read and
 * parse it again. Only a body the SDK would read the same way takes this path — complete, within the
 * limit, JSON; anything else (empty, too large, not JSON, not POST) is replayed to the SDK byte for byte,
 * so its answers to those (413, parse errors) are its own, unchanged.
 */
async function preparsed(
  req: Request,
  limitBytes: number,
): Promise<{ parsed: unknown } | { replay: Request }> {
  if (req.method !== 'POST' || Number(req.headers['content-length']) > limitBytes) return { replay: req };
  const chunks: Buffer[] = [];
  let received = 0;
  const source = req[Symbol.asyncIterator]();
  try {
    for (let next = await source.next(); !next.done; next = await source.next()) {
      const chunk = next.value as Buffer;
      chunks.push(chunk);
      received += chunk.byteLength;
      if (received > limitBytes) return { replay: replaying(req, chunks, source) };
    }
  } catch (error) {
    // The stream failed (the client went away): the SDK meets the same error where it would have.
    return { replay: replaying(req, chunks, { next: () => Promise.reject(error) }) };
  }
  const text = Buffer.concat(chunks).toString('utf8');
  // A BOM the SDK's TextDecoder would strip: let it decide, as it does today.
  if (text.length > 0 && text.charCodeAt(0) !== 0xfeff)
    try {
      return { parsed: JSON.parse(text) as unknown };
    } catch {
      // Not JSON: the SDK answers it.
    }
  return { replay: replaying(req, chunks, source) };
}

/** `req` whose body reads as the chunks already taken, then the rest of the stream. */
function replaying(req: Request, taken: Buffer[], rest: AsyncIterator<unknown>): Request {
  async function* body(): AsyncGenerator<unknown> {
    yield* taken;
    for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
  }
  // The adapter reads method, url, headers and the body as an async iterable (toWebRequest).
  return Object.assign(Object.create(req) as Request, { [Symbol.asyncIterator]: body });
}

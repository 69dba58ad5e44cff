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
  const serve = (req: Request, res: Response): void => {
    // The identity travels as the SDK's pass-through authInfo; the credential itself never does.
    const auth = { token: '', clientId: guards.callerOf(req), scopes: [] };
    // The MCP call spans (src/mcp/provider-server.ts) descend from the trace the request carries.
    void withRemoteContext(req.headers, () => node(Object.assign(req, { auth }), res));
  };
  app.all(options.path ?? MCP_PATH, guards.auth, serve);
  return { close: () => handler.close() };
}

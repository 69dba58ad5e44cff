import type { Express, Request, RequestHandler, Response } from 'express';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { ANONYMOUS_IDENTITY } from '../shared/identity.js';
import { silentLogger, type Logger } from '../shared/logger.js';
import { withRemoteContext } from '../shared/tracing.js';
import { MCP_PATH } from './acmp-extension.js';
import { CallerScopedBus } from './caller-bus.js';
import type { McpContribution } from './contribution.js';
import { createHostMcpFactory } from './host-mcp.js';
import { mcpBodyReader } from './http-body.js';
import { parsedBodyNodeHandler } from './parsed-node-handler.js';

/** What the host gives the endpoint (structurally the host's `HttpGuards`). */
export interface McpHttpGuards {
  /** Bearer authentication (Layer 1 §5.1), the same as on the A2A routes. */
  readonly auth: RequestHandler;
  /** The identity `auth` authenticated: the same string over every binding, so tasks are scoped alike. */
  readonly callerOf: (req: Request) => string;
  readonly bodyLimitBytes: number;
}

/** Options of {@link mountHostMcp}. */
export interface HostMcpEndpointOptions {
  /** The modules' MCP features, applied to every instance (src/mcp/host-mcp.ts). */
  contributions: { readonly all: readonly McpContribution[] };
  guards: McpHttpGuards;
  logger?: Logger;
  /** Default {@link MCP_PATH}. */
  path?: string;
}

/** The mounted endpoint, to stop with the host. */
export interface HostMcpEndpoint {
  /** Aborts the exchanges in flight (call after `stopping` aborted, so they detach rather than cancel). */
  close(): Promise<void>;
}

/**
 * Mounts the host's MCP server over Streamable HTTP on its Express app (docs/acmp-mcp-binding.md §1,
 * docs/acpspec-mcp.md), whenever a module contributes MCP features: the SDK's
 * per-request handler serves the 2026-07-28 revision and, statelessly, 2025-era clients; in front of it
 * the host's bearer authentication, whose caller identity scopes every task exactly as over A2A, and the
 * host's one read of the body through the shared JSON edge (src/mcp/http-body.ts). The
 * `Origin` check MCP transports §Security requires (DNS rebinding) is the host's, in front of every route
 * (src/server/host-guard.ts).
 */
export function mountHostMcp(app: Express, options: HostMcpEndpointOptions): HostMcpEndpoint {
  const logger = options.logger ?? silentLogger;
  const { guards } = options;
  const factory = createHostMcpFactory({
    contributions: options.contributions,
    transport: 'http',
    callerOf: (context) => context.authInfo?.clientId ?? ANONYMOUS_IDENTITY,
  });
  const onerror = (error: Error): void => logger.debug('mcp.request_rejected', { error: error.name });
  // Subscription streams are scoped by caller; contributions publish their changes onto them.
  const bus = new CallerScopedBus();
  const disconnects = options.contributions.all.flatMap((c) =>
    c.connectHttp ? [c.connectHttp((owner, event) => bus.publishTo(owner, event))] : [],
  );
  const handler = createMcpHandler(factory, {
    bus,
    legacy: 'stateless',
    maxRequestBodySize: guards.bodyLimitBytes,
    onerror,
  });
  const node = parsedBodyNodeHandler(handler, { maxRequestBodySize: guards.bodyLimitBytes, onerror });
  const readBody = mcpBodyReader(guards.bodyLimitBytes);
  const serve = async (req: Request, res: Response): Promise<void> => {
    // The identity travels as the SDK's pass-through authInfo; the credential itself never does.
    const auth = { token: '', clientId: guards.callerOf(req), scopes: [] };
    // Read and judged once, here; the SDK then classifies and serves the parsed body without reading it.
    const body = await readBody(req, res);
    if (body.kind === 'answered') return logger.debug('mcp.request_rejected', { reason: body.reason });
    const parsedBody = body.kind === 'parsed' ? body.value : undefined;
    // The MCP call spans (src/mcp/provider-server.ts) descend from the trace the request carries.
    await withRemoteContext(req.headers, () =>
      bus.runAs(auth.clientId, () => node(Object.assign(req, { auth }), res, parsedBody)),
    );
  };
  app.all(options.path ?? MCP_PATH, guards.auth, (req, res) => void serve(req, res));
  return {
    close: async () => {
      for (const disconnect of disconnects) disconnect();
      await handler.close();
    },
  };
}

import { McpServer, type McpRequestContext, type McpServerFactory } from '@modelcontextprotocol/server';
import { withContributions, type McpCall, type McpContribution } from './contribution.js';

/** `serverInfo` of every answer of the host's MCP server. */
const MCP_SERVER_INFO = { name: 'a2a-commerce', version: '0.1.0' } as const;

/**
 * `server/discover` may be cached as long as the A2A card (its `Cache-Control: max-age=300`): the capability
 * object changes only when the host restarts, and it is the same for every caller.
 */
const DISCOVER_CACHE = { ttlMs: 300_000, cacheScope: 'public' } as const;

/** Options of {@link createHostMcpFactory}. */
export interface HostMcpOptions {
  /** The modules' MCP features (ACMP's methods, ACPspec's resources and tools), applied to every instance. */
  contributions: { readonly all: readonly McpContribution[] };
  /** Which transport the instances serve (told to the contributions). */
  transport: McpCall['transport'];
  /** The caller of one request (HTTP: from the credential) or of the whole stdio connection. */
  callerOf(context: McpRequestContext): string;
}

/**
 * The host's MCP server factory (docs/acpspec-mcp.md "One MCP server"): a fresh server per HTTP request or
 * stdio connection, built from every module's contribution in the order the modules started: their
 * capabilities merged (extension objects key by key), their instructions joined, their handlers
 * registered for the instance's one caller. No module builds it for another.
 */
export function createHostMcpFactory(options: HostMcpOptions): McpServerFactory {
  return (context) => {
    const contributions = options.contributions.all;
    const serving = { era: context.era, transport: options.transport };
    const mcp = new McpServer(MCP_SERVER_INFO, {
      capabilities: withContributions({}, contributions, serving),
      instructions: contributions.map((c) => c.instructions).join(' '),
      cacheHints: { 'server/discover': DISCOVER_CACHE },
    });
    const call = { caller: options.callerOf(context), ...serving };
    const method = exchangeMethod(context);
    for (const contribution of contributions) {
      if (method === undefined || contribution.serves?.(method) !== false) contribution.register(mcp, call);
    }
    return mcp;
  };
}

/**
 * The one method a modern HTTP instance will serve, when it is known before the instance is built: the
 * `Mcp-Method` header. MCP 2026-07-28 (transports, "Standard request headers") requires it on every
 * request and the SDK's handler refuses one that lacks it or disagrees with the body before it calls the
 * factory, so an instance built for it answers only that method. Registering the other contributions'
 * handlers there (ACPspec's tools with their schemas, for an `acmp/invoke`) was a third of the MCP
 * binding's own cost per request (docs/performance.md). A 2025-era or stdio instance serves whatever
 * comes: undefined.
 */
function exchangeMethod(context: McpRequestContext): string | undefined {
  if (context.era !== 'modern') return undefined;
  const header = context.requestInfo?.headers.get('mcp-method');
  return header === null || header === undefined ? undefined : header.trim();
}

import type { JSONObject, McpServer, ServerCapabilities, ServerEvent } from '@modelcontextprotocol/server';

/** Whom one MCP server instance serves, and how. */
export interface McpCall {
  /** The caller's identity (src/shared/identity.ts): the same string on every binding. */
  readonly caller: string;
  readonly era: 'modern' | 'legacy';
  /** Streamable HTTP (one instance per request) or stdio (one instance per connection, a local pipe). */
  readonly transport: 'http' | 'stdio';
}

/**
 * What a host module adds to the host's MCP server besides ACMP's own methods (resources, tools, prompts;
 * docs/acpspec-mcp.md). The server factory applies every contribution to every instance it builds.
 */
export interface McpContribution {
  /** Capabilities merged into each instance's (`extensions` key by key). */
  capabilities(serving: Omit<McpCall, 'caller'>): ServerCapabilities;
  /** One sentence appended to the server's `instructions`. */
  readonly instructions: string;
  /** Registers the contribution's handlers on one instance serving `call`. */
  register(mcp: McpServer, call: McpCall): void;
  /**
   * Whether `register` installs a handler for `method` (a request or notification method). An instance
   * built for one known method registers only the contributions that serve it (src/mcp/host-mcp.ts); a
   * contribution without this predicate is registered on every instance.
   */
  serves?(method: string): boolean;
  /**
   * Connects the HTTP endpoint's subscription streams: `publish(owner, event)` delivers a change event to
   * the `subscriptions/listen` streams that `owner` opened, and to no other caller's. Returns the
   * disconnection, called when the endpoint closes.
   */
  connectHttp?(publish: (owner: string, event: ServerEvent) => void): () => void;
}

/**
 * The contributions of a host's modules: added as the modules start, read by the MCP server factory for
 * each instance (so the order in which modules start does not matter).
 */
export class McpContributions {
  private readonly items: McpContribution[] = [];

  add(contribution: McpContribution): void {
    this.items.push(contribution);
  }

  get all(): readonly McpContribution[] {
    return this.items;
  }
}

/** `base` with every contribution's capabilities merged in: extension objects key by key, the rest by name. */
export function withContributions(
  base: ServerCapabilities,
  contributions: readonly McpContribution[],
  serving: Omit<McpCall, 'caller'>,
): ServerCapabilities {
  let merged: ServerCapabilities = base;
  for (const contribution of contributions) {
    const extra = contribution.capabilities(serving);
    const extensions: Record<string, JSONObject> = { ...merged.extensions, ...extra.extensions };
    merged = { ...merged, ...extra, extensions };
  }
  return merged;
}

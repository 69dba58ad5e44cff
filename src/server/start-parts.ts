import type express from 'express';
import { McpContributions } from '../mcp/contribution.js';
import { mountHostMcp, type HostMcpEndpoint } from '../mcp/http-endpoint.js';
import { serveHostStdio } from '../mcp/stdio-server.js';
import type { Logger } from '../shared/logger.js';
import type {
  HostModule,
  HttpGuards,
  ModuleContext,
  ModuleParts,
  StdioConnection,
  StdioSession,
} from './module.js';

/**
 * Starts each module in order with the host's context (and one set of MCP contributions), pushing its parts onto `parts` (so a failure leaves
 * the started ones to close), then the host's MCP server as a part of its own (docs/acpspec-mcp.md "One MCP
 * server"): present whenever a started module contributed MCP features (ACMP's methods, ACPspec's
 * resources and tools), so `/mcp` and `mcp-stdio` serve on a host running any of them, built once by the
 * host from every contribution. Being last, it closes first (parts close last started first): the MCP
 * exchanges in flight detach before the modules behind them stop.
 */
export async function startParts(
  modules: readonly HostModule[],
  host: Omit<ModuleContext, 'mcp'>,
  parts: ModuleParts[],
): Promise<void> {
  const mcp = new McpContributions();
  const context: ModuleContext = { ...host, mcp };
  for (const m of modules) parts.push(await m.start(context));
  if (mcp.all.length > 0) parts.push(new HostMcpPart(mcp, context.logger));
}

/** The MCP endpoint (Streamable HTTP at /mcp) and stdio server over the host's contributions. */
class HostMcpPart implements ModuleParts {
  private endpoint: HostMcpEndpoint | undefined;

  constructor(
    private readonly contributions: McpContributions,
    private readonly logger: Logger,
  ) {}

  mountHttp(app: express.Express, guards: HttpGuards): void {
    this.endpoint = mountHostMcp(app, { contributions: this.contributions, guards, logger: this.logger });
  }

  serveStdio({ stdin, stdout, caller }: StdioConnection): StdioSession {
    return serveHostStdio({ contributions: this.contributions, caller, stdin, stdout, logger: this.logger });
  }

  async close(): Promise<void> {
    await this.endpoint?.close();
  }
}

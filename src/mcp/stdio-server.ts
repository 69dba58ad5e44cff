import type { Readable, Writable } from 'node:stream';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { silentLogger, type Logger } from '../shared/logger.js';
import type { McpContribution } from './contribution.js';
import { createHostMcpFactory } from './host-mcp.js';

/** Options of {@link serveHostStdio}. */
export interface HostStdioOptions {
  /** The modules' MCP features, applied to the connection's server (src/mcp/host-mcp.ts). */
  contributions: { readonly all: readonly McpContribution[] };
  /** The one caller of the connection: the identity of the token its environment presented (Layer 1 §5.1). */
  caller: string;
  stdin: Readable;
  stdout: Writable;
  logger?: Logger;
}

/** One stdio connection being served. */
export interface HostStdioSession {
  /** Resolves when the client closes its end (stdin ends). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves the host's MCP server over stdio (docs/acmp-mcp-binding.md §1, docs/acpspec-mcp.md): the SDK's
 * entry decides the connection's era from its opening (2026-07-28 `_meta` requests, or a 2025-era
 * `initialize`) and pins one server from the host's factory. On stdio only `notifications/cancelled` (and
 * `acmp/cancel`) cancel; a closed stdin detaches the requests in flight and ends the session.
 */
export function serveHostStdio(options: HostStdioOptions): HostStdioSession {
  const logger = options.logger ?? silentLogger;
  const { caller, stdin, stdout } = options;
  const factory = createHostMcpFactory({
    contributions: options.contributions,
    transport: 'stdio',
    callerOf: () => caller,
  });
  const closed = new Promise<void>((resolve) => {
    stdin.once('end', () => resolve());
    stdin.once('close', () => resolve());
  });
  const handle = serveStdio(factory, {
    transport: new StdioServerTransport(stdin, stdout),
    onerror: (error) => logger.debug('mcp.stdio_error', { error: error.name }),
  });
  return { closed, close: () => handle.close() };
}

import type { Readable, Writable } from 'node:stream';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { TaskScope } from '../acmp/task-store.js';
import { silentLogger } from '../shared/logger.js';
import { createAcmpMcpFactory, type AcmpMcpServerOptions } from './provider-server.js';

/** Options of {@link serveAcmpStdio}. */
export interface AcmpStdioOptions extends Omit<
  AcmpMcpServerOptions,
  'scopeOf' | 'connectionCloseCancels' | 'transport'
> {
  /** The one caller of the connection: the identity of the token its environment presented (Layer 1 §5.1). */
  scope: TaskScope;
  stdin: Readable;
  stdout: Writable;
}

/** One stdio connection being served. */
export interface AcmpStdioSession {
  /** Resolves when the client closes its end (stdin ends). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves ACMP over MCP stdio (docs/acmp-mcp-binding.md §1): the SDK's entry decides the connection's era
 * from its opening (2026-07-28 `_meta` requests, or a 2025-era `initialize`) and pins one server from the
 * ACMP factory. On stdio only `notifications/cancelled` (and `acmp/cancel`) cancel; a closed stdin detaches
 * the requests in flight and ends the session.
 */
export function serveAcmpStdio(options: AcmpStdioOptions): AcmpStdioSession {
  const logger = options.logger ?? silentLogger;
  const { scope, stdin, stdout } = options;
  const factory = createAcmpMcpFactory({
    ...options,
    connectionCloseCancels: false,
    transport: 'stdio',
    scopeOf: () => scope,
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

import { parseArgs } from 'node:util';
import { createJsonLogger } from '../shared/logger.js';
import { ENV, resolveHostConfig } from '../server/config.js';
import { defaultModules } from './host-modules.js';
import { serveStdioHost } from '../server/stdio-host.js';
import { UsageError, type CliIo } from './io.js';

export const MCP_STDIO_USAGE = `Usage: a2a-commerce mcp-stdio [options]

Serves the host's ACMP provider over MCP stdio (docs/acmp-mcp-binding.md), with ACPspec transactions as
resources and tools (docs/acpspec-mcp.md): JSON-RPC on stdin/stdout,
2026-07-28 requests and 2025-era initialize alike, logs on stderr. Meant to be started by an MCP client.
Tasks live in the same store as 'serve' (same --data-dir or --db), so a task started here and retried over
A2A or MCP HTTP by the same caller replays or joins.

  --data-dir <dir>       data directory of the SQLite store (${ENV.dataDir}, default .data)
  --db <url>             postgres://…, sqlite:<file> or memory (${ENV.db})
  --token <name=secret>  accepted bearer token, repeatable (${ENV.tokens}); as for serve
  --tokens-file <path>   one name=secret a line (${ENV.tokensFile})
  --log-level <level>    debug|info|warn|error|silent (${ENV.logLevel}, default warn)

The caller presents its token in A2AC_TOKEN (Layer 1 §5.1: over stdio the token travels in the
environment). When the host accepts tokens, a missing or wrong A2AC_TOKEN stops the command at once.`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  db: { type: 'string' },
  token: { type: 'string', multiple: true },
  'tokens-file': { type: 'string' },
  'log-level': { type: 'string' },
} as const;

/** `a2a-commerce mcp-stdio`: serves one MCP connection on stdin/stdout until stdin ends or a signal. */
export async function mcpStdio(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  // stdout carries the protocol: no TLS, no listening; everything human goes to stderr.
  const config = resolveHostConfig(
    { ...values, 'log-level': values['log-level'] ?? io.env[ENV.logLevel] ?? 'warn', 'no-tls': true },
    io.env,
  );
  const logger = createJsonLogger({ level: config.logLevel, write: (line) => io.err(line) });
  // ACMP serves the connection; ACPspec adds its resources and tools to it (docs/acpspec-mcp.md).
  const modules = defaultModules(config).filter((m) => m.name === 'acmp' || m.name === 'acpspec');
  const session = await serveStdioHost(config, {
    modules,
    stdin: process.stdin,
    stdout: process.stdout,
    token: io.env.A2AC_TOKEN,
    logger,
  });
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    void session.closed.then(stop);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await session.close();
  return 0;
}

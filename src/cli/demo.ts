import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveHostConfig } from '../server/config.js';
import { startHost } from '../server/host.js';
import { defaultModules } from './host-modules.js';
import { startTracing } from '../server/tracing.js';
import { createJsonLogger } from '../shared/logger.js';
import { DEMO_SCENARIOS, type DemoContext } from './demo/scenarios.js';
import type { CliIo } from './io.js';

/**
 * `a2a-commerce demo` (`npm run demo`): starts a host on an ephemeral loopback port with the embedded
 * SQLite default and a self-signed certificate in a fresh data directory, runs every scenario against
 * it with the SDK's real client, prints a transcript, stops the host and exits 0 only if all passed.
 */
export async function demo(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { keep: { type: 'boolean' }, verbose: { type: 'boolean' } },
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'a2a-commerce-demo-'));
  const config = resolveHostConfig(
    { host: '127.0.0.1', port: '0', 'data-dir': dataDir, 'tls-self-signed': true },
    {},
  );
  const logger = createJsonLogger({ level: values.verbose ? 'info' : 'warn', write: (line) => io.err(line) });
  // The same OTEL_* switch as `serve` (docs/operations.md "Tracing"): a demo run can be one trace per flow.
  const tracing = startTracing(io.env, logger);
  const host = await startHost(config, { modules: defaultModules(config), logger });
  io.out(`a2a-commerce demo — host at ${host.url} (SQLite in ${dataDir}, self-signed TLS)\n`);
  const ctx: DemoContext = { url: host.url, caCert: host.tls?.cert, dataDir, say: (line) => io.out(line) };
  let failed = 0;
  try {
    for (const scenario of DEMO_SCENARIOS) {
      io.out(`== ${scenario.title}`);
      try {
        await scenario.run(ctx);
        io.out(`   ok\n`);
      } catch (error) {
        failed++;
        io.out(`   FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
  } finally {
    await host.close();
    await tracing.shutdown();
    if (!values.keep) rmSync(dataDir, { recursive: true, force: true });
  }
  io.out(
    failed === 0
      ? `demo finished: ${DEMO_SCENARIOS.length} scenarios passed`
      : `demo finished: ${failed} scenario(s) failed`,
  );
  return failed === 0 ? 0 : 1;
}

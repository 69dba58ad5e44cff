import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AcmpCapability } from '../src/acmp/provider/provider.js';
import { resolveHostConfig } from '../src/server/config.js';
import { startHost } from '../src/server/host.js';
import type { HostModule } from '../src/server/module.js';
import { acmpModule } from '../src/server/modules/acmp.js';
import { acpModule } from '../src/server/modules/acpspec.js';
import { startBaselineHost } from './baseline-host.js';
import type { ServerSpec, ServerToParent, ParentToServer } from './protocol.js';

/**
 * A benchmark server in its own process: starts the host the spec names on 127.0.0.1:0, reports its URL
 * over IPC and answers `stats` requests with its own CPU time and RSS (measured here, in the server).
 */

/** ACMP capabilities of the benchmark: `noop` answers at once; `chunks` streams `input.data.n` chunks. */
function benchCapabilities(): AcmpCapability[] {
  return [
    { id: 'noop', price: 0, handler: () => Promise.resolve({ type: 'text', data: 'ok' }) },
    {
      id: 'chunks',
      price: 0,
      handler(input, ctx) {
        const data = input.data as { n?: number; heartbeats?: boolean };
        const n = data.n ?? 10;
        // The handler contract is an AsyncIterable; the chunks are ready at once.
        // eslint-disable-next-line @typescript-eslint/require-await
        return (async function* () {
          for (let i = 0; i < n; i++) {
            // Explicit progress heartbeats (a no-op when the provider advertises none).
            if (data.heartbeats) ctx.heartbeat(i / n);
            yield { type: 'text', data: `chunk ${i}` };
          }
        })();
      },
    },
  ];
}

async function start(
  spec: ServerSpec,
): Promise<{ url: string; grpcUrl?: string; caCert?: string; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'a2ac-bench-'));
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (spec.kind === 'baseline') {
    const host = await startBaselineHost({ store: spec.store, dataDir });
    return { url: host.url, close: async () => (await host.close(), removeDir()) };
  }
  const modules: HostModule[] = [];
  if (spec.acmp)
    modules.push(
      acmpModule({
        capabilities: benchCapabilities(),
        heartbeatIntervalMs: spec.heartbeats ? 5000 : null,
        outputStreaming: true,
      }),
    );
  if (spec.acp)
    modules.push(
      acpModule({ producer: { agent_id: 'https://dealer.example/agents/acp', role: 'dealer_agent' } }),
    );
  const db = spec.store === 'memory' ? 'memory' : `sqlite:${join(dataDir, 'bench.sqlite')}`;
  const config = resolveHostConfig(
    // Our host also serves gRPC (idle unless a gRPC scenario runs), so both transports share one process.
    {
      host: '127.0.0.1',
      port: '0',
      'grpc-port': '0',
      'data-dir': dataDir,
      db,
      ...(spec.tls ? { 'tls-self-signed': true } : { 'no-tls': true }),
      // ACPspec refuses a plain-HTTP interface unless the host declares it handles no personal data.
      ...(spec.acp && !spec.tls ? { 'no-personal-data': true } : {}),
      'log-level': 'silent',
      // The load generator is one caller sending thousands of requests: the per-caller request rate (on by
      // default, docs/host.md) would refuse most of them, so the bench measures the path without it.
      'rate-limit': '0',
    },
    {},
  );
  const host = await startHost(config, { modules, metrics: spec.metrics === false ? 'none' : 'prometheus' });
  return {
    url: host.url,
    grpcUrl: host.grpcUrl,
    caCert: host.tls?.cert,
    close: async () => (await host.close(), removeDir()),
  };
}

const send = (message: ServerToParent): void => void process.send?.(message);
const spec = JSON.parse(process.argv[2] ?? '{}') as ServerSpec;
const host = await start(spec);
process.on('message', (message: ParentToServer) => {
  if (message.type === 'stats') {
    if (message.gc && typeof globalThis.gc === 'function') globalThis.gc();
    send({ type: 'stats', cpu: process.cpuUsage(), rss: process.memoryUsage().rss });
  } else if (message.type === 'close') {
    void host.close().finally(() => process.exit(0));
  }
});
send({ type: 'ready', url: host.url, grpcUrl: host.grpcUrl, caCert: host.caCert });

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { errorCode, LocalError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { hostAccessOf } from './allowed-hosts.js';
import type { HostConfig } from './config.js';
import { hostGuard } from './host-guard.js';
import { METRICS_PATH, scrapeHandler, type HostMetrics } from './metrics.js';

/** The metrics port, listening: its URL (`http://host:port/metrics`) and how to close it. */
export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` alone on a plain-HTTP port of its own (`--metrics-port`, docs/operations.md
 * "Metrics"), bound to `--metrics-host` or the host's address: the same scrape token and the same
 * Host/Origin check as the main port (with the metrics address among the allowed names); every other path
 * is 404.
 * @throws LocalError `CONFIG_INVALID` when the port cannot be listened on, naming the flag.
 */
export async function listenMetrics(
  config: Pick<HostConfig, 'host' | 'publicUrl' | 'tokens' | 'allowedHosts' | 'metrics'>,
  options: { metrics: HostMetrics; logger: Logger },
): Promise<MetricsListener> {
  const host = config.metrics.host ?? config.host;
  const app = express();
  app.disable('x-powered-by');
  app.use(hostGuard(hostAccessOf({ ...config, host }), options.logger));
  app.get(METRICS_PATH, scrapeHandler(options.metrics, config.metrics.token));
  app.use((_req, res) => {
    res
      .status(404)
      .json({ error: { code: 404, status: 'NOT_FOUND', message: 'Only /metrics is served here' } });
  });
  const server = createServer(app);
  await listenOn(server, { host, port: config.metrics.port ?? 0 });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}${METRICS_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function listenOn(server: Server, where: { host: string; port: number }): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(where.port, where.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (cause) {
    const code = errorCode(cause);
    throw new LocalError(
      'CONFIG_INVALID',
      `cannot serve metrics on ${where.host}:${where.port} (${String(code ?? cause)}): choose another --metrics-port or --metrics-host`,
      { cause },
    );
  }
}

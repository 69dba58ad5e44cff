import type { Server } from 'node:http';
import { errorCode, LocalError } from '../shared/errors.js';
import type { HostConfig } from './config.js';

/** Listens on the configured address. @throws LocalError `CONFIG_INVALID` saying why the address cannot be used. */
export async function listen(server: Server, config: HostConfig): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (cause) {
    const code = errorCode(cause);
    const where = `${config.host}:${config.port}`;
    const fix =
      code === 'EADDRINUSE'
        ? `another process listens there: stop it, or choose another --port (--port 0 picks a free one)`
        : code === 'EACCES'
          ? `ports below 1024 need privileges: choose --port 8443 or another above 1023`
          : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
            ? `--host ${config.host} is not an address of this machine: use 127.0.0.1, 0.0.0.0 or one of its addresses`
            : `check --host and --port`;
    throw new LocalError('CONFIG_INVALID', `cannot listen on ${where} (${String(code ?? cause)}): ${fix}`, {
      cause,
    });
  }
}

/**
 * Stops the server accepting connections and closes the idle ones; connections with a response under
 * way get `settleMs` to finish it (a draining host sends `Connection: close`, so each closes after its
 * response), then every connection still open is cut.
 */
export async function closeHttpServer(server: Server, settleMs: number): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  if (settleMs > 0) {
    let timer: NodeJS.Timeout | undefined;
    const settled = new Promise<void>((resolve) => (timer = setTimeout(resolve, settleMs)));
    await Promise.race([closed, settled]);
    clearTimeout(timer);
  }
  server.closeAllConnections();
  await closed;
}

import type { Server } from 'node:net';
import { systemClock, type Clock } from './clock.js';
import type { Logger } from './logger.js';

/** How often at most a port's refused connections are logged (one line with the count since the last). */
const DROP_LOG_INTERVAL_MS = 60_000;

/**
 * Caps the open connections of a listening server (Node's `maxConnections`): a connection beyond the cap
 * is closed at once, and the server serves the next one as soon as one of the open ones ends. Refusals
 * are logged as `<port>.connections_capped` with their count, at most once a minute, so a flood cannot
 * flood the log too.
 */
export function capConnections(
  server: Server,
  max: number,
  options: { logger: Logger; port: 'http' | 'grpc'; clock?: Clock },
): void {
  const clock = options.clock ?? systemClock;
  server.maxConnections = max;
  let dropped = 0;
  let loggedAt: number | undefined;
  server.on('drop', () => {
    dropped += 1;
    const now = clock.now();
    if (loggedAt !== undefined && now - loggedAt < DROP_LOG_INTERVAL_MS) return;
    options.logger.warn(`${options.port}.connections_capped`, { maxConnections: max, dropped });
    loggedAt = now;
    dropped = 0;
  });
}

import type { ServerOptions as HttpServerOptions } from 'node:http';
import type { ConnectionLimits } from './connection-config.js';

/**
 * Node's HTTP(S) server options for the limits (docs/host.md "Connections"). `headersTimeout` and
 * `requestTimeout` measure receiving the request only: once it is in, a response may stream for as long as
 * it likes (SSE streams are not cut). Node checks both every `connectionsCheckingInterval` (30 s by
 * default), so the interval follows the shorter timeout to close slow sockets close to their deadline.
 * `handshakeTimeout` (HTTPS) gives the TLS handshake the same budget as the headers.
 */
export function httpServerOptions(
  limits: ConnectionLimits,
): HttpServerOptions & { handshakeTimeout: number } {
  const shortest = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs || Infinity);
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(shortest / 4))),
    handshakeTimeout: limits.headersTimeoutMs,
  };
}

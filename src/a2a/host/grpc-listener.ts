import { createServer, type Server, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { capConnections } from '../../shared/connection-cap.js';
import type { Logger } from '../../shared/logger.js';

/** The connection limits of the gRPC port (the host's `ConnectionLimits`; docs/host.md "Connections"). */
export interface GrpcConnectionLimits {
  /** From connect to the HTTP/2 client preface (and, with TLS, the handshake). */
  readonly headersTimeoutMs: number;
  /** Open connections on the port; the next one is closed at once. */
  readonly maxConnections: number;
  /** The server pings every connection this often, and closes it when the ping is not answered in time. */
  readonly grpcKeepaliveMs: number;
  readonly grpcKeepaliveTimeoutMs: number;
  /** A connection without a call for this long gets GOAWAY. */
  readonly grpcIdleTimeoutMs: number;
}

/** The HTTP/2 client connection preface (RFC 9113 §3.4): what a gRPC client sends first. */
const CLIENT_PREFACE_BYTES = 24;

/** grpc-js server options for the limits: keepalive pings and the idle limit. */
export function grpcServerOptions(limits: GrpcConnectionLimits): grpc.ServerOptions {
  return {
    'grpc.keepalive_time_ms': limits.grpcKeepaliveMs,
    'grpc.keepalive_timeout_ms': limits.grpcKeepaliveTimeoutMs,
    'grpc.max_connection_idle_ms': limits.grpcIdleTimeoutMs,
  };
}

/**
 * TLS credentials like `ServerCredentials.createSsl` (no client certificates), with Node's TLS
 * `handshakeTimeout`: grpc-js leaves it at Node's 120 s, so a socket that never finishes its handshake
 * would stay that long.
 */
class HandshakeLimitedTls extends grpc.ServerCredentials {
  constructor(tls: { cert: string; key: string }, handshakeTimeoutMs: number) {
    super(
      { requestCert: false, handshakeTimeout: handshakeTimeoutMs },
      { cert: [Buffer.from(tls.cert)], key: [Buffer.from(tls.key)] },
    );
  }

  override _equals(other: grpc.ServerCredentials): boolean {
    return other === this;
  }
}

/** The server credentials: TLS with the handshake limit, or plaintext (h2c). */
export function grpcCredentials(
  tls: { cert: string; key: string } | undefined,
  limits: GrpcConnectionLimits,
): grpc.ServerCredentials {
  return tls
    ? new HandshakeLimitedTls(tls, limits.headersTimeoutMs)
    : grpc.ServerCredentials.createInsecure();
}

/** A listening gRPC port. */
export interface GrpcListener {
  readonly port: number;
  /** Stops accepting; `destroy` also closes every connection still open. */
  close(options: { destroy: boolean }): void;
}

/**
 * Listens for the gRPC server on our own TCP server and hands it each connection (grpc-js's connection
 * injector), so the port gets what grpc-js has no option for: a connection cap, and a first-bytes limit
 * that closes a socket which has not sent the HTTP/2 preface (or, with TLS, its ClientHello) within
 * `headersTimeoutMs`. Keepalive and idle limits are grpc-js's own ({@link grpcServerOptions}).
 * @throws Error when the port cannot be bound.
 */
export async function listenGrpc(
  address: { host: string; port: number },
  options: {
    server: grpc.Server;
    credentials: grpc.ServerCredentials;
    limits: GrpcConnectionLimits;
    logger: Logger;
  },
): Promise<GrpcListener> {
  const injector = options.server.createConnectionInjector(options.credentials);
  const sockets = new Set<Socket>();
  const listener = createServer((socket) => {
    sockets.add(socket);
    const timer = setTimeout(() => {
      if (socket.bytesRead < CLIENT_PREFACE_BYTES) socket.destroy();
    }, options.limits.headersTimeoutMs);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      sockets.delete(socket);
    });
    injector.injectConnection(socket);
  });
  capConnections(listener, options.limits.maxConnections, { logger: options.logger, port: 'grpc' });
  const port = await bind(listener, address);
  return {
    port,
    close({ destroy }) {
      listener.close();
      if (destroy) for (const socket of sockets) socket.destroy();
    },
  };
}

function bind(listener: Server, address: { host: string; port: number }): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(address.port, address.host, () => {
      listener.off('error', reject);
      const bound = listener.address();
      resolve(typeof bound === 'object' && bound !== null ? bound.port : address.port);
    });
  });
}

import { CONNECTION_ENV, DEFAULT_CONNECTION_LIMITS as D } from '../server/connection-config.js';
import { ENV } from '../server/config.js';

/** `serve`'s connection and Host/Origin options (docs/host.md "Connections", "Host and Origin"). */
export const SERVE_CONNECTION_OPTIONS = {
  'headers-timeout-ms': { type: 'string' },
  'request-timeout-ms': { type: 'string' },
  'keep-alive-timeout-ms': { type: 'string' },
  'max-connections': { type: 'string' },
  'grpc-keepalive-ms': { type: 'string' },
  'grpc-keepalive-timeout-ms': { type: 'string' },
  'grpc-idle-timeout-ms': { type: 'string' },
  'allowed-host': { type: 'string', multiple: true },
} as const;

const E = CONNECTION_ENV;

/** The usage lines of {@link SERVE_CONNECTION_OPTIONS}. */
export const SERVE_CONNECTION_USAGE = `  --allowed-host <name>  a host name requests may address besides localhost, the listen address and the
                         --public-url host, repeatable (${ENV.allowedHosts}, comma-separated)
  --headers-timeout-ms <n>  connect to complete request headers, TLS handshake and gRPC preface included
                         (${E.headersTimeoutMs}, default ${D.headersTimeoutMs})
  --request-timeout-ms <n>  connect to the whole request received; streamed replies are not cut
                         (${E.requestTimeoutMs}, default ${D.requestTimeoutMs})
  --keep-alive-timeout-ms <n>  idle HTTP keep-alive connections (${E.keepAliveTimeoutMs}, default ${D.keepAliveTimeoutMs})
  --max-connections <n>  open connections per port, HTTP and gRPC each (${E.maxConnections}, default ${D.maxConnections})
  --grpc-keepalive-ms <n>  ping gRPC connections this often (${E.grpcKeepaliveMs}, default ${D.grpcKeepaliveMs}) and close
                         them after --grpc-keepalive-timeout-ms unanswered (${E.grpcKeepaliveTimeoutMs}, default ${D.grpcKeepaliveTimeoutMs})
  --grpc-idle-timeout-ms <n>  GOAWAY to gRPC connections idle this long (${E.grpcIdleTimeoutMs}, default ${D.grpcIdleTimeoutMs})`;

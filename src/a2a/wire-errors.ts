import type { Response } from 'express';

/** The host's own error reasons (google.rpc.ErrorInfo `reason`), for failures before the SDK runs. */
export type HostErrorReason = 'UNAUTHENTICATED' | 'BODY_TOO_LARGE' | 'INVALID_JSON' | 'UNSUPPORTED_CONTENT_TYPE';

/** Domain of the host's ErrorInfo details (A2A §9.5/§11.6 error detail objects). */
export const HOST_ERROR_DOMAIN = 'a2a-commerce';

/**
 * JSON-RPC codes for host errors. A2A §3.3.2 leaves authentication to "a JSON-RPC custom error"; we use
 * -31401, outside both the JSON-RPC reserved range and A2A's -32001…-32099 (docs/host.md).
 */
const JSON_RPC_CODE: Record<HostErrorReason, number> = {
  UNAUTHENTICATED: -31401,
  BODY_TOO_LARGE: -32600,
  INVALID_JSON: -32700,
  UNSUPPORTED_CONTENT_TYPE: -32005,
};

const HTTP: Record<HostErrorReason, { status: number; name: string }> = {
  UNAUTHENTICATED: { status: 401, name: 'UNAUTHENTICATED' },
  BODY_TOO_LARGE: { status: 413, name: 'RESOURCE_EXHAUSTED' },
  INVALID_JSON: { status: 400, name: 'INVALID_ARGUMENT' },
  UNSUPPORTED_CONTENT_TYPE: { status: 415, name: 'INVALID_ARGUMENT' },
};

/** Which transport a request arrived on decides the error's shape. */
export type WireShape = 'jsonrpc' | 'rest' | 'plain';

/**
 * Sends a host error shaped for the transport: JSON-RPC 2.0 error object (A2A §9.5) with the HTTP
 * status that fits, or google.rpc.Status (A2A §11.6). Messages are fixed strings, never request text.
 */
export function sendHostError(
  res: Response,
  shape: WireShape,
  reason: HostErrorReason,
  message: string,
  metadata?: Record<string, string>,
): void {
  const detail = {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason,
    domain: HOST_ERROR_DOMAIN,
    ...(metadata ? { metadata } : {}),
  };
  const { status, name } = HTTP[reason];
  if (reason === 'UNAUTHENTICATED') res.setHeader('WWW-Authenticate', 'Bearer realm="a2a-commerce"');
  if (shape === 'jsonrpc') {
    res.status(status).json({ jsonrpc: '2.0', id: null, error: { code: JSON_RPC_CODE[reason], message, data: [detail] } });
    return;
  }
  res.status(status).json({ error: { code: status, status: name, message, details: [detail] } });
}

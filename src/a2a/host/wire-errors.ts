import type { Response } from 'express';

/** Domain of the host's ErrorInfo details (A2A §9.5/§11.6 error detail objects). */
export const HOST_ERROR_DOMAIN = 'a2a-commerce';

/**
 * The host's own errors, for refusals before the SDK runs: the ErrorInfo `reason`, its JSON-RPC code and
 * its HTTP status with the google.rpc code name. A2A §3.3.2 leaves authentication to "a JSON-RPC custom
 * error"; we use -31401, outside both the JSON-RPC reserved range and A2A's -32001…-32099 (docs/host.md),
 * and -31403 for the refusals of the `Host`/`Origin` check.
 */
export const HOST_ERRORS = {
  UNAUTHENTICATED: { jsonRpc: -31401, status: 401, name: 'UNAUTHENTICATED' },
  BODY_TOO_LARGE: { jsonRpc: -32600, status: 413, name: 'RESOURCE_EXHAUSTED' },
  /** Not JSON, not UTF-8, or a body that cannot be decoded (a Content-Encoding it does not have). */
  INVALID_JSON: { jsonRpc: -32700, status: 400, name: 'INVALID_ARGUMENT' },
  UNSUPPORTED_CONTENT_TYPE: { jsonRpc: -32005, status: 415, name: 'INVALID_ARGUMENT' },
  /** Not a JSON-RPC 2.0 request object (JSON-RPC 2.0 §4: batches, ids that are not string/number/null). */
  INVALID_REQUEST: { jsonRpc: -32600, status: 400, name: 'INVALID_ARGUMENT' },
  /** Valid JSON outside the edge profile (docs/host.md "Bad input": numbers, strings, depth). */
  JSON_LIMIT: { jsonRpc: -32602, status: 400, name: 'INVALID_ARGUMENT' },
  /** Params (or a REST path, query or body) the methods cannot take: wrong shape, ids out of limits. */
  INVALID_PARAMS: { jsonRpc: -32602, status: 400, name: 'INVALID_ARGUMENT' },
  /** A `Host` header naming none of the host's names (DNS rebinding; docs/host.md "Host and Origin"). */
  HOST_NOT_ALLOWED: { jsonRpc: -31403, status: 403, name: 'PERMISSION_DENIED' },
  /** A browser `Origin` that is not one of the host's own. */
  ORIGIN_NOT_ALLOWED: { jsonRpc: -31403, status: 403, name: 'PERMISSION_DENIED' },
  /** Over the caller's request rate (docs/host.md "Limits per caller"); -31429 mirrors HTTP 429 as -31401 does 401. */
  RATE_LIMITED: { jsonRpc: -31429, status: 429, name: 'RESOURCE_EXHAUSTED' },
} as const satisfies Record<string, { jsonRpc: number; status: number; name: string }>;

/** The host's own error reasons (google.rpc.ErrorInfo `reason`). */
export type HostErrorReason = keyof typeof HOST_ERRORS;

/** Which transport a request arrived on decides the error's shape. */
export type WireShape = 'jsonrpc' | 'rest' | 'plain';

/** A JSON-RPC request id as JSON-RPC 2.0 §4 allows it. */
export type JsonRpcId = string | number | null;

/** A host error to send: its reason, a fixed message, and the ErrorInfo metadata. */
export interface HostErrorReply {
  readonly reason: HostErrorReason;
  /** A fixed string, never request text. */
  readonly message: string;
  readonly metadata?: Record<string, string> | undefined;
  /** The request's id once it is known to be valid (JSON-RPC 2.0 §5: null when it could not be read). */
  readonly id?: JsonRpcId;
}

/**
 * Sends a host error shaped for the transport: JSON-RPC 2.0 error object (A2A §9.5) with the HTTP
 * status that fits, or google.rpc.Status (A2A §11.6). Messages are fixed strings, never request text.
 */
export function sendHostError(res: Response, shape: WireShape, error: HostErrorReply): void {
  const { reason, message, metadata, id = null } = error;
  const detail = {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason,
    domain: HOST_ERROR_DOMAIN,
    ...(metadata ? { metadata } : {}),
  };
  const { status, name, jsonRpc } = HOST_ERRORS[reason];
  if (reason === 'UNAUTHENTICATED') res.setHeader('WWW-Authenticate', 'Bearer realm="a2a-commerce"');
  if (shape === 'jsonrpc') {
    res.status(status).json({ jsonrpc: '2.0', id, error: { code: jsonRpc, message, data: [detail] } });
    return;
  }
  res.status(status).json({ error: { code: status, status: name, message, details: [detail] } });
}

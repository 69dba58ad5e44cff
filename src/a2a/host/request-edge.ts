import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { checkJsonValue, isSafeJsonString } from '../../shared/json-edge.js';
import { isJsonObject } from '../../shared/json.js';
import { wireOf } from './http-front.js';
import { hasJsonBody } from './json-body.js';
import { checkWireId, type WireIdKind } from './wire-limits.js';
import { sendHostError, type JsonRpcId } from './wire-errors.js';

/**
 * The request-level half of the edge (docs/host.md "Bad input"), after {@link jsonBody} parsed the body
 * and before the inbound normaliser and the SDK see it. The value-level profile (numbers, strings,
 * depth) is src/shared/json-edge.ts, the same for every transport.
 */

/** The id of a request whose id is valid (JSON-RPC 2.0 §4: a string, a number without fraction, or null). */
export function validRequestId(body: unknown): JsonRpcId | undefined {
  if (!isJsonObject(body)) return undefined;
  const id = body.id;
  if (id === undefined || id === null) return null;
  if (typeof id === 'string') return id;
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : undefined;
}

/**
 * JSON-RPC: the body must be one request object (JSON-RPC 2.0 §4; A2A v1.0 defines no batches) with
 * `"jsonrpc": "2.0"`, a string method, an id that is a string, an integer or null, and params that are
 * an object when present — otherwise -32600 with a null id (§5). Then the value profile: -32602, echoing
 * the now valid id.
 */
export function jsonRpcEdge(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasJsonBody(req)) return next();
    const body = req.body as unknown;
    const id = validRequestId(body);
    if (
      !isJsonObject(body) ||
      id === undefined ||
      body.jsonrpc !== '2.0' ||
      typeof body.method !== 'string'
    ) {
      const why = Array.isArray(body)
        ? 'batch requests are not supported'
        : 'not a JSON-RPC 2.0 request object';
      sendHostError(res, 'jsonrpc', { reason: 'INVALID_REQUEST', message: `Invalid Request: ${why}` });
      return;
    }
    if (body.params !== undefined && !isJsonObject(body.params)) {
      sendHostError(res, 'jsonrpc', {
        reason: 'INVALID_PARAMS',
        message: 'Invalid params: params must be an object',
        id,
      });
      return;
    }
    const problem = checkJsonValue(body);
    if (problem) {
      sendHostError(res, 'jsonrpc', {
        reason: 'JSON_LIMIT',
        message: "Invalid params: a JSON value is outside the host's limits",
        metadata: { rule: problem },
        id,
      });
      return;
    }
    next();
  };
}

/**
 * HTTP+JSON: the path must decode (no `%ZZ`) into segments within the id limits (tenant, task id,
 * push-config id), each query parameter must appear once with an id-safe value where it names an id, and
 * a body must be a JSON object (or `null`, which v0.3 clients send for "no body") within the value
 * profile. Otherwise 400 INVALID_ARGUMENT.
 */
export function restEdge(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const pathProblem = checkRestPath(req.path, wireOf(req));
    if (pathProblem) {
      sendHostError(res, 'rest', { reason: 'INVALID_PARAMS', message: `Invalid path: ${pathProblem}` });
      return;
    }
    const queryProblem = checkRestQuery(req.query);
    if (queryProblem) {
      sendHostError(res, 'rest', { reason: 'INVALID_PARAMS', message: `Invalid query: ${queryProblem}` });
      return;
    }
    if (hasJsonBody(req)) {
      const body = req.body as unknown;
      if (body !== undefined && body !== null && !isJsonObject(body)) {
        sendHostError(res, 'rest', {
          reason: 'INVALID_PARAMS',
          message: 'Invalid body: a request body is a JSON object',
        });
        return;
      }
      const problem = checkJsonValue(body);
      if (problem) {
        sendHostError(res, 'rest', {
          reason: 'JSON_LIMIT',
          message: "Invalid body: a JSON value is outside the host's limits",
          metadata: {
            rule: problem,
          },
        });
        return;
      }
    }
    next();
  };
}

/** First segments of the v1.0 HTTP+JSON routes (A2A §11.3); any other first segment is a tenant. */
const V1_ROUTES = new Set(['tasks', 'message:send', 'message:stream', 'extendedAgentCard']);

/**
 * A REST path relative to the binding's mount, decoded, split as the SDK routes it: a v0.3 request
 * whose path starts with `v1/` goes to the v0.3 routes (no tenant); everything else to the v1.0 routes,
 * where a first segment that names no route is the tenant (`/{tenant}/message:send`). Undefined when a
 * segment is not valid percent-encoding.
 */
export function restSegments(
  path: string,
  wire: 'v1' | 'v0.3',
): { tenant: string | undefined; route: string[]; legacy: boolean } | undefined {
  const segments: string[] = [];
  for (const raw of path.split('/').filter((s) => s !== '')) {
    try {
      segments.push(decodeURIComponent(raw));
    } catch {
      return undefined;
    }
  }
  const first = segments[0];
  if (wire === 'v0.3' && first === 'v1') return { tenant: undefined, route: segments, legacy: true };
  if (first !== undefined && segments.length > 1 && !V1_ROUTES.has(first))
    return { tenant: first, route: segments.slice(1), legacy: false };
  return { tenant: undefined, route: segments, legacy: false };
}

/**
 * What is wrong with a REST path, or undefined: it must decode, the tenant is held to its limits, and no
 * segment holds what the value profile refuses.
 */
function checkRestPath(path: string, wire: 'v1' | 'v0.3'): string | undefined {
  const segments = restSegments(path, wire);
  if (!segments) return 'a segment is not valid percent-encoding';
  const tenantProblem = segments.tenant === undefined ? undefined : checkWireId('tenant', segments.tenant);
  if (tenantProblem) return tenantProblem;
  // Task and push-config ids in the path are looked up: one no store could hold is TaskNotFound, from
  // the request handler (src/a2a/host/wire-limits.ts), as on every transport.
  if (segments.route.some((segment) => !isSafeJsonString(segment)))
    return 'a segment holds U+0000 or a lone surrogate';
  return undefined;
}

/** Query parameters that name ids, with the limit each is held to. */
const QUERY_IDS: Record<string, WireIdKind> = {
  tenant: 'tenant',
  contextId: 'contextId',
  context_id: 'contextId',
};

function checkRestQuery(query: Request['query']): string | undefined {
  for (const [name, value] of Object.entries(query)) {
    if (typeof value !== 'string') return 'each query parameter may appear once';
    if (!isSafeJsonString(name) || !isSafeJsonString(value))
      return 'a parameter holds U+0000 or a lone surrogate';
    const kind = Object.hasOwn(QUERY_IDS, name) ? QUERY_IDS[name] : undefined;
    const problem = kind ? checkWireId(kind, value) : undefined;
    if (problem) return problem;
  }
  return undefined;
}

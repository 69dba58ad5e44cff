import type * as grpc from '@grpc/grpc-js';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { wireOf } from './http-front.js';
import type { WireShape } from './wire-errors.js';

/**
 * Spellings other A2A implementations send that the SDK reads only in some places (docs/host.md
 * "Interop"): the v0.3 extensions header, and v1.0.1's media type.
 */

/** A2A v1.0 §3.2.6 service parameter (the SDK reads this name on v1.0 requests). */
const EXTENSIONS = 'a2a-extensions';
/** Its v0.3 name; v0.3 clients, and clients that send both spellings, still use it. */
const LEGACY_EXTENSIONS = 'x-a2a-extensions';

const JSON_MEDIA_TYPE = 'application/json';
/** A2A v1.0.1 §14.1.1; §11.1: it SHOULD be used for HTTP+JSON requests and responses. */
const A2A_MEDIA_TYPE = 'application/a2a+json';
const JSON_MEDIA_TYPES: ReadonlySet<string> = new Set([JSON_MEDIA_TYPE, A2A_MEDIA_TYPE]);

/** Both spellings' values as one comma-separated list (A2A §11.2: one field, comma-separated). */
function joined(values: readonly string[]): string | undefined {
  const all = values.flatMap((v) => v.split(',')).map((v) => v.trim());
  const unique = [...new Set(all.filter((v) => v !== ''))];
  return unique.length === 0 ? undefined : unique.join(',');
}

/**
 * HTTP: a request's `X-A2A-Extensions` counts as `A2A-Extensions`, whichever wire version it speaks (the
 * SDK reads the v0.3 name on v0.3 requests only). With both headers, the extensions of both are requested.
 */
export function legacyExtensionsHeader(): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const legacy = req.headers[LEGACY_EXTENSIONS];
    if (legacy !== undefined) {
      const current = req.headers[EXTENSIONS];
      const value = joined([current, legacy].flat().filter((v): v is string => v !== undefined));
      if (value !== undefined) req.headers[EXTENSIONS] = value;
    }
    next();
  };
}

/** gRPC: the same for `x-a2a-extensions` metadata (the SDK's gRPC service reads `a2a-extensions` only). */
export function acceptLegacyExtensions(metadata: grpc.Metadata): void {
  const legacy = metadata.get(LEGACY_EXTENSIONS).map(String);
  if (legacy.length === 0) return;
  const value = joined([...metadata.get(EXTENSIONS).map(String), ...legacy]);
  if (value !== undefined) metadata.set(EXTENSIONS, value);
}

/** The media type of a Content-Type value, lower-cased without parameters. */
function mediaTypeOf(value: string | undefined): string {
  return (value ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
}

/**
 * The media type a JSON answer is sent in. JSON-RPC: always `application/json` (A2A §9.1 names it for
 * requests and responses). HTTP+JSON at v1.0: `application/a2a+json` when the client asks for it — it sent
 * its body in it and accepts it, or its Accept prefers it — else `application/json`, which every JSON
 * client reads (the SDK's own choice, a2a+json always, fails clients and the official TCK that expect
 * application/json). v0.3 (which has no a2a+json): application/json.
 */
function answerMediaType(req: Request, shape: WireShape): string {
  if (shape !== 'rest' || wireOf(req) !== 'v1') return JSON_MEDIA_TYPE;
  if (mediaTypeOf(req.header('content-type')) === A2A_MEDIA_TYPE && req.accepts(A2A_MEDIA_TYPE))
    return A2A_MEDIA_TYPE;
  return req.accepts([JSON_MEDIA_TYPE, A2A_MEDIA_TYPE]) === A2A_MEDIA_TYPE ? A2A_MEDIA_TYPE : JSON_MEDIA_TYPE;
}

/**
 * `application/a2a+json` on the way in and out of one transport (A2A v1.0.1 §11.1). In: a JSON-RPC
 * request sent as a2a+json is read as JSON (the SDK's JSON-RPC transport refuses any type but
 * application/json; the body reader already reads both). Out: every JSON answer — the SDK's results and
 * errors, and the host's own refusals — goes in {@link answerMediaType}; event streams are untouched.
 * The SDK sets the type itself as it writes, so the response's `setHeader` rewrites a JSON media type
 * to the chosen one, keeping its parameters (`charset`).
 */
export function jsonMediaTypes(shape: WireShape): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const sent = req.header('content-type');
    if (shape === 'jsonrpc' && sent !== undefined && mediaTypeOf(sent) === A2A_MEDIA_TYPE)
      req.headers['content-type'] = withMediaType(sent, JSON_MEDIA_TYPE);
    pinJsonMediaType(res, answerMediaType(req, shape));
    next();
  };
}

function pinJsonMediaType(res: Response, mediaType: string): void {
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name: string, value: number | string | readonly string[]) =>
    setHeader(name, name.toLowerCase() === 'content-type' ? withMediaType(value, mediaType) : value);
}

function withMediaType<T>(value: T, mediaType: string): T | string {
  if (typeof value !== 'string' || !JSON_MEDIA_TYPES.has(mediaTypeOf(value))) return value;
  const params = value.indexOf(';');
  return params < 0 ? mediaType : mediaType + value.slice(params);
}

import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { parseJsonBytes } from '../../shared/json-edge.js';
import { sendHostError, type WireShape } from './wire-errors.js';

/** Body media types the host parses (the SDK's own parsers then skip an already-read body). */
const JSON_TYPES = ['application/json', 'application/a2a+json'];
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

const parsed = new WeakSet<Request>();

/** True when {@link jsonBody} read this request's body as JSON (false: no body, or another media type). */
export function hasJsonBody(req: Request): boolean {
  return parsed.has(req);
}

/**
 * Reads JSON bodies with a size limit and parses them through the shared edge (src/shared/json-edge.ts):
 * bytes that are not UTF-8 (RFC 8259 §8.1) or not JSON get -32700 / 400 — never a body with U+FFFD in it.
 * A body over the limit gets -32600 / 413; one that cannot be decoded (a `Content-Encoding` it does not
 * have, a charset other than UTF-8) a coded 4xx too, never the app's last-resort 500. Requests of other
 * media types pass untouched, for the SDK's own content-type check.
 */
export function jsonBody(limitBytes: number, shape: WireShape): RequestHandler[] {
  const raw = express.raw({ limit: limitBytes, type: JSON_TYPES });
  // The reader's failures are answered as it reports them, so no four-parameter error middleware is needed.
  const read = (req: Request, res: Response, next: NextFunction): void => {
    raw(req, res, (err?: unknown) => (err ? refuseUnread(err, res, next) : next()));
  };
  const parse = (req: Request, res: Response, next: NextFunction): void => {
    if (!Buffer.isBuffer(req.body)) return next();
    const charset = CHARSET.exec(req.header('content-type') ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      sendHostError(res, shape, {
        reason: 'UNSUPPORTED_CONTENT_TYPE',
        message: 'Unsupported charset; JSON is UTF-8',
      });
      return;
    }
    const check = parseJsonBytes(req.body);
    if (!check.ok) {
      sendHostError(res, shape, {
        reason: 'INVALID_JSON',
        message: 'Invalid JSON payload',
        metadata: { rule: check.problem },
      });
      return;
    }
    req.body = check.value;
    parsed.add(req);
    next();
  };
  /** A body the reader could not read: too large, an unsupported encoding, cut short — or a failure of its own. */
  const refuseUnread = (err: unknown, res: Response, next: NextFunction): void => {
    const { type, status } = (err ?? {}) as { type?: unknown; status?: unknown };
    if (type === 'entity.too.large') {
      sendHostError(res, shape, {
        reason: 'BODY_TOO_LARGE',
        message: 'Request body too large',
        metadata: {
          limitBytes: String(limitBytes),
        },
      });
    } else if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      sendHostError(res, shape, {
        reason: 'UNSUPPORTED_CONTENT_TYPE',
        message: 'Unsupported content encoding',
      });
    } else if (typeof status === 'number' && status >= 400 && status < 500) {
      // A body that does not decode as its Content-Encoding says, or one cut short.
      sendHostError(res, shape, {
        reason: 'INVALID_JSON',
        message: 'Request body could not be read',
        metadata: { rule: 'encoding' },
      });
    } else next(err);
  };
  return [read, parse];
}

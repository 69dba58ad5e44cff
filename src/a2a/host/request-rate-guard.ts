import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { BearerToken } from '../../shared/identity.js';
import type { Logger } from '../../shared/logger.js';
import { rateKeyOf, type RequestLimiter } from '../../shared/request-rate.js';
import { bearerVerifier } from './bearer.js';
import { sendHostError, type WireShape } from './wire-errors.js';

/** What {@link requestRateGuard} counts with. */
export interface RequestRateGuardOptions {
  readonly limiter: RequestLimiter;
  readonly tokens: readonly BearerToken[];
  readonly logger: Logger;
  /**
   * The binding a request is for (logged) and the shape of its refusal: JSON-RPC for `/a2a/jsonrpc` and
   * `/mcp`, google.rpc.Status for the others.
   */
  readonly routeOf: (req: Request) => { readonly binding: string; readonly shape: WireShape };
}

/**
 * The request rate of every HTTP route (JSON-RPC, HTTP+JSON, MCP, ACPspec), before authentication and
 * before the body is read: a request counts for the identity its bearer token names, or for its remote
 * address when it names none (tokenless host, missing or wrong token). Over the rate: HTTP 429 with
 * `Retry-After` (whole seconds, RFC 9110 §10.2.3) in the path's error shape — JSON-RPC -31429 (id null:
 * the body is not read) or google.rpc.Status RESOURCE_EXHAUSTED — reason `RATE_LIMITED`; each refusal is
 * logged (the identity, never the credential or the address).
 */
export function requestRateGuard(options: RequestRateGuardOptions): RequestHandler {
  const verify = bearerVerifier(options.tokens);
  return (req: Request, res: Response, next: NextFunction) => {
    const check = verify(req.header('authorization'));
    const identity = 'user' in check && check.user.isAuthenticated ? check.user.userName : undefined;
    const key = rateKeyOf(identity, req.socket.remoteAddress);
    options.limiter.take(key).then((verdict) => {
      if (verdict.admitted) return next();
      const retryAfterS = Math.ceil(verdict.retryAfterMs / 1000);
      const { binding, shape } = options.routeOf(req);
      options.logger.warn('limit.rate_refused', {
        binding,
        caller: identity ?? 'anonymous',
        requests: options.limiter.requests,
        windowMs: options.limiter.windowMs,
        retryAfterMs: verdict.retryAfterMs,
      });
      res.setHeader('Retry-After', String(retryAfterS));
      sendHostError(res, shape, {
        reason: 'RATE_LIMITED',
        message: 'Too many requests',
        metadata: { retryAfterSeconds: String(retryAfterS) },
      });
    }, next);
  };
}

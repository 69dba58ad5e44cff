import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { User } from '@a2a-js/sdk/server';
import { ANONYMOUS_IDENTITY, type BearerToken } from '../../shared/identity.js';
import { ANONYMOUS_USER, BEARER_REFUSAL } from './bearer.js';
import { callerVerifier, type DidCallerPolicy } from './caller-auth.js';
import { normalizeInboundMessageJson } from '../part-codec.js';
import { sendHostError, type WireShape } from './wire-errors.js';

const users = new WeakMap<Request, User>();

/** The identity of a request's caller: the authenticated one, or {@link ANONYMOUS_IDENTITY} without tokens. */
export function callerOf(req: Request): string {
  return users.get(req)?.userName ?? ANONYMOUS_IDENTITY;
}

/** The SDK's UserBuilder: the user {@link bearerAuth} authenticated, or the anonymous one. */
export function userFromRequest(req: Request): Promise<User> {
  return Promise.resolve(users.get(req) ?? ANONYMOUS_USER);
}

/**
 * Bearer authentication on HTTP (the check itself is {@link callerVerifier}, shared with gRPC): static
 * tokens, and DID caller tokens when `didCallers` is given. A refusal is HTTP 401 in the transport's
 * error shape.
 */
export function bearerAuth(
  tokens: readonly BearerToken[],
  shape: WireShape,
  didCallers?: DidCallerPolicy,
): RequestHandler {
  const verify = callerVerifier(tokens, didCallers);
  return (req: Request, res: Response, next: NextFunction) => {
    verify(req.header('authorization')).then((check) => {
      if ('user' in check) {
        users.set(req, check.user);
        return next();
      }
      sendHostError(res, shape, { reason: 'UNAUTHENTICATED', message: BEARER_REFUSAL[check.refused] });
    }, next);
  };
}

/** The wire version a request speaks: A2A §3.6.2, an absent `A2A-Version` means 0.3. */
export function wireOf(req: Request): 'v1' | 'v0.3' {
  const version = req.header('a2a-version') ?? '0.3';
  return version.startsWith('0.') ? 'v0.3' : 'v1';
}

/**
 * Rewrites the inbound message's accepted spellings into the form the SDK parses, for JSON-RPC
 * (`params.message`) and REST (`message`) bodies alike. See {@link normalizeInboundMessageJson}.
 */
export function normalizeInbound(shape: WireShape): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const body = req.body as unknown;
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      const b = body as Record<string, unknown>;
      const dialect = wireOf(req) === 'v1' ? 'v1' : shape === 'rest' ? 'v0.3-rest' : 'v0.3-jsonrpc';
      if (typeof b.params === 'object' && b.params !== null && 'message' in b.params) {
        const params = b.params as Record<string, unknown>;
        b.params = { ...params, message: normalizeInboundMessageJson(params.message, dialect) };
      } else if ('message' in b) {
        b.message = normalizeInboundMessageJson(b.message, dialect);
      }
    }
    next();
  };
}

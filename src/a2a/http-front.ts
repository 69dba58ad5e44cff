import { timingSafeEqual, createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { User } from '@a2a-js/sdk/server';
import { ANONYMOUS_IDENTITY, type BearerToken } from '../shared/identity.js';
import { normalizeInboundMessageJson } from './part-codec.js';
import { sendHostError, type WireShape } from './wire-errors.js';

/**
 * The authenticated caller: the identity of the token it presented (`agent:<name>` or `token:<digest>`,
 * src/shared/identity.ts), never the token and never its position in the configuration.
 */
export class BearerUser implements User {
  constructor(private readonly identity: string) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.identity;
  }
}

/** Every caller of a host without tokens: one identity, {@link ANONYMOUS_IDENTITY}. */
const ANONYMOUS_USER: User = { isAuthenticated: false, userName: ANONYMOUS_IDENTITY };

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
 * Bearer authentication (ACMP Layer 1 §5.1 baseline MUST; A2A §7.4: servers MUST reject missing or
 * invalid credentials). Tokens are compared by SHA-256 digest in constant time. With no tokens
 * configured every caller passes as anonymous.
 */
export function bearerAuth(tokens: readonly BearerToken[], shape: WireShape): RequestHandler {
  const digests = tokens.map((t) => createHash('sha256').update(t.secret).digest());
  return (req: Request, res: Response, next: NextFunction) => {
    if (digests.length === 0) return next();
    const header = req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match) {
      const presented = createHash('sha256').update(match[1]!).digest();
      const index = digests.findIndex((d) => timingSafeEqual(d, presented));
      if (index >= 0) {
        users.set(req, new BearerUser(tokens[index]!.identity));
        return next();
      }
    }
    sendHostError(res, shape, 'UNAUTHENTICATED', match ? 'Invalid bearer token' : 'Bearer token required');
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

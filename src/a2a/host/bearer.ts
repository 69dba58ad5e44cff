import { createHash, hash, timingSafeEqual } from 'node:crypto';
import type { User } from '@a2a-js/sdk/server';
import { ANONYMOUS_IDENTITY, type BearerToken } from '../../shared/identity.js';

/**
 * The authenticated caller: the identity of the token it presented (`agent:<name>` or `token:<digest>`,
 * src/shared/identity.ts), never the token and never its position in the configuration.
 */
class BearerUser implements User {
  constructor(private readonly identity: string) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.identity;
  }
}

/** Every caller of a host without tokens: one identity, {@link ANONYMOUS_IDENTITY}. */
export const ANONYMOUS_USER: User = { isAuthenticated: false, userName: ANONYMOUS_IDENTITY };

/** What a presented `Authorization` value amounts to. */
export type BearerCheck = { user: User } | { refused: 'missing' | 'invalid' };

/**
 * Checks `Authorization` values against the configured tokens — the one check behind every transport
 * (HTTP headers, gRPC metadata), so a token names the same caller everywhere. ACMP Layer 1 §5.1 makes
 * bearer the baseline; A2A §7.4: servers MUST reject missing or invalid credentials. Tokens are compared
 * by SHA-256 digest in constant time. With no tokens configured every caller is anonymous.
 */
export function bearerVerifier(
  tokens: readonly BearerToken[],
): (authorization: string | undefined) => BearerCheck {
  const known = tokens.map((t) => ({
    identity: t.identity,
    digest: createHash('sha256').update(t.secret).digest(),
  }));
  return (authorization) => {
    if (known.length === 0) return { user: ANONYMOUS_USER };
    const secret = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (secret === undefined) return { refused: 'missing' };
    const presented = hash('sha256', secret, 'buffer');
    const token = known.find((k) => timingSafeEqual(k.digest, presented));
    return token ? { user: new BearerUser(token.identity) } : { refused: 'invalid' };
  };
}

/** The fixed text of a refusal (never the presented value). */
export const BEARER_REFUSAL: Record<'missing' | 'invalid', string> = {
  missing: 'Bearer token required',
  invalid: 'Invalid bearer token',
};

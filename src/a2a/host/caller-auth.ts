import { AGENT_CARD_PATH } from '@a2a-js/sdk';
import type { User } from '@a2a-js/sdk/server';
import { checkCallerToken, type CallerTokenPolicy } from '../../acmp/identity/index.js';
import type { BearerToken } from '../../shared/identity.js';
import { errorFields, silentLogger, type Logger } from '../../shared/logger.js';
import { ANONYMOUS_USER, bearerVerifier, type BearerCheck } from './bearer.js';

/**
 * A host's policy for callers identified by their DID (docs/acmp-identity.md "Callers identified by
 * DID"): one object per host, so its replay cache is shared by HTTP, gRPC and `/mcp`.
 */
export interface DidCallerPolicy extends Omit<CallerTokenPolicy, 'signal'> {
  readonly logger?: Logger;
}

/** Checks one `Authorization` value (HTTP header or gRPC metadata) and says who the caller is. */
export type CallerVerifier = (
  authorization: string | undefined,
  options?: { signal?: AbortSignal },
) => Promise<BearerCheck>;

/** A caller identified by a DID token: its identity is the DID itself (src/shared/identity.ts). */
class DidUser implements User {
  constructor(private readonly did: string) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.did;
  }
}

/** A compact JWS: three base64url segments. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The caller check behind every transport: a configured bearer token first (its holder's identity),
 * then — when the host accepts DID callers — a caller token signed with the caller's DID key (the
 * identity is the DID). With neither tokens nor DID callers every caller is anonymous; with DID callers
 * on, a caller without credentials is refused like one without a token.
 */
export function callerVerifier(
  tokens: readonly BearerToken[],
  didCallers: DidCallerPolicy | undefined,
): CallerVerifier {
  const bearer = bearerVerifier(tokens);
  if (!didCallers) return (authorization) => Promise.resolve(bearer(authorization));
  const logger = didCallers.logger ?? silentLogger;
  return async (authorization, options) => {
    const secret = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (secret === undefined) return { refused: 'missing' };
    if (tokens.length > 0) {
      const check = bearer(authorization);
      if ('user' in check && check.user !== ANONYMOUS_USER) return check;
    }
    if (!COMPACT_JWS.test(secret)) return { refused: 'invalid' };
    let check: Awaited<ReturnType<typeof checkCallerToken>>;
    try {
      check = await checkCallerToken(secret, { ...didCallers, signal: options?.signal });
    } catch (error) {
      // A replay cache that cannot answer refuses: a token it cannot mark spent is never accepted.
      logger.warn('auth.caller_token_unchecked', errorFields(error));
      return { refused: 'invalid' };
    }
    if (check.ok) return { user: new DidUser(check.did) };
    logger.debug('auth.caller_token_refused', { refusal: check.refusal });
    return { refused: 'invalid' };
  };
}

/** The `aud` values a host at `baseUrl` answers to: its base URL and the URL of its agent card. */
export function didCallerAudiences(baseUrl: string): string[] {
  return [baseUrl, `${baseUrl}/${AGENT_CARD_PATH}`];
}

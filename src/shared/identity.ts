import { createHash, hash, timingSafeEqual } from 'node:crypto';

/**
 * Caller identities: the owner string every store records for the data a caller creates (the SDK's task
 * and push-notification tables, ACPspec transactions, ACMP tasks). An identity comes from the credential
 * the caller presented, never from where that credential sits in the host's configuration, so revoking a
 * token (or reordering the list, or running several hosts) never hands one agent's data to another.
 *
 * The forms are disjoint by prefix:
 * - `agent:<name>` — a named token (`name=secret`);
 * - `token:<32 hex>` — an unnamed token: the first 32 hex digits of the SHA-256 of the secret
 *   (`printf %s "$secret" | sha256sum | cut -c1-32`);
 * - `did:<method>:<id>` — a caller identified by a token signed with its DID key (the DID itself);
 * - `anonymous` — every caller of a host without tokens;
 * - `legacy:token-<n>` — rows of releases that named callers by position; no credential resolves to it.
 */

/** The one identity of every caller of a host without tokens. */
export const ANONYMOUS_IDENTITY = 'anonymous';

/** Prefix of the identities the position-based releases (`token-<n>`) are migrated to. */
const LEGACY_PREFIX = 'legacy:';

/** A token name: lower-case letters, digits, `.`, `_`, `-`; starting with a letter or digit; ≤ 64 characters. */
const TOKEN_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The shortest bearer secret the host accepts. */
const MIN_SECRET_LENGTH = 16;

const TOKEN_DIGEST_HEX = 32;

/** A configured bearer credential and the identity of whoever presents it. */
export interface BearerToken {
  readonly identity: string;
  readonly secret: string;
}

/** The identity of a named token's holder. */
export function agentIdentity(name: string): string {
  return `agent:${name}`;
}

/** The identity of an unnamed token's holder, derived from the secret (which it does not reveal). */
export function tokenIdentity(secret: string): string {
  return `token:${createHash('sha256').update(secret).digest('hex').slice(0, TOKEN_DIGEST_HEX)}`;
}

/** Whether `value` is an identity in one of the documented forms (the targets `reassign` accepts). */
export function isIdentity(value: string): boolean {
  if (value === ANONYMOUS_IDENTITY) return true;
  if (value.startsWith('agent:')) return TOKEN_NAME_PATTERN.test(value.slice('agent:'.length));
  if (value.startsWith('token:'))
    return new RegExp(`^[0-9a-f]{${TOKEN_DIGEST_HEX}}$`).test(value.slice('token:'.length));
  if (value.startsWith('did:')) return /^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/.test(value);
  return /^legacy:token-\d+$/.test(value);
}

/** The migrated identity of a position-based owner (`token-3` → `legacy:token-3`), or undefined for any other owner. */
export function legacyIdentityOf(previousOwner: string): string | undefined {
  return /^token-\d+$/.test(previousOwner) ? LEGACY_PREFIX + previousOwner : undefined;
}

/**
 * Parses one configured token: `name=secret` (split at the first `=`) or a bare secret.
 * @returns the token, or a reason it is refused (which never contains the secret).
 */
export function parseBearerToken(entry: string): BearerToken | { refused: string } {
  const equals = entry.indexOf('=');
  const name = equals < 0 ? undefined : entry.slice(0, equals);
  const secret = equals < 0 ? entry : entry.slice(equals + 1);
  if (name !== undefined && !TOKEN_NAME_PATTERN.test(name)) {
    return {
      refused:
        'token name must be 1-64 characters of a-z, 0-9, ".", "_", "-", starting with a letter or digit (a token containing "=" must be written name=secret)',
    };
  }
  if (secret.length < MIN_SECRET_LENGTH)
    return { refused: `each token secret must be at least ${MIN_SECRET_LENGTH} characters` };
  return { identity: name === undefined ? tokenIdentity(secret) : agentIdentity(name), secret };
}

/**
 * The identity of whoever presents `secret`, compared by SHA-256 digest in constant time like the bearer
 * check of HTTP requests; `undefined` when no configured token has that secret.
 */
export function identityOfSecret(tokens: readonly BearerToken[], secret: string): string | undefined {
  const presented = hash('sha256', secret, 'buffer');
  return tokens.find((t) => timingSafeEqual(createHash('sha256').update(t.secret).digest(), presented))
    ?.identity;
}

import { randomUUID, type KeyObject } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { systemClock, type Clock } from '../../shared/clock.js';
import type { DidDocument, VerificationMethod } from './did-document.js';
import { keyFitsAlg, publicKeyOf } from './public-key.js';
import type { ReplayCache } from './replay-cache.js';
import { isSignatureAlg, type SignatureAlg, type Signer } from './signer.js';
import type { DidResolver } from './verify.js';
import { errorCode } from '../../shared/errors.js';

/*
 * Caller tokens (docs/acmp-identity.md "Callers identified by DID"): a compact JWS (RFC 7515) JWT
 * (RFC 7519) signed with a key of the caller's DID, sent as `Authorization: Bearer <jwt>`. Header
 * `alg` EdDSA or ES256, `typ` JWT, `kid` the verification method's DID URL; claims `iss` = `sub` = the
 * DID, `aud` the host's base URL or its agent card URL, `iat`, `exp` (at most five minutes later) and a
 * `jti` the host accepts once.
 */

/** The longest lifetime (`exp` − `iat`) a host accepts. */
export const CALLER_TOKEN_MAX_LIFETIME_S = 300;
/** The lifetime of the tokens {@link mintCallerToken} makes unless told otherwise. */
const DEFAULT_LIFETIME_S = 120;
/** How far the clocks of caller and host may disagree. */
export const CALLER_TOKEN_SKEW_S = 30;
/** Larger tokens are not parsed. */
const MAX_TOKEN_CHARS = 4096;
const MAX_JTI_CHARS = 128;
/** DID syntax (DID Core §3.1) without path, query or fragment. */
const DID_PATTERN = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/;
const MAX_DID_CHARS = 512;

/** Options of {@link mintCallerToken}. */
export interface MintCallerTokenOptions {
  /** The host the token is for: its base URL, or the URL of the agent card the caller read. */
  readonly audience: string;
  /** Seconds until `exp` (default 120, at most {@link CALLER_TOKEN_MAX_LIFETIME_S}). */
  readonly lifetimeS?: number;
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/**
 * A fresh caller token for `audience`, signed by `signer` (the key never leaves it: the JWS signing
 * input is handed to {@link Signer.sign}, whose EdDSA and ES256 output is already the JOSE form).
 */
export async function mintCallerToken(signer: Signer, options: MintCallerTokenOptions): Promise<string> {
  const lifetime = Math.min(options.lifetimeS ?? DEFAULT_LIFETIME_S, CALLER_TOKEN_MAX_LIFETIME_S);
  const iat = Math.floor((options.clock ?? systemClock).now() / 1000);
  const header = { alg: signer.alg, typ: 'JWT', kid: signer.verificationMethod };
  const claims = {
    iss: signer.did,
    sub: signer.did,
    aud: options.audience,
    iat,
    exp: iat + lifetime,
    jti: randomUUID(),
  };
  const input = `${b64url(header)}.${b64url(claims)}`;
  const signature = await signer.sign(Buffer.from(input, 'ascii'), { signal: options.signal });
  return `${input}.${Buffer.from(signature).toString('base64url')}`;
}

/** What {@link checkCallerToken} checks a token against. */
export interface CallerTokenPolicy {
  readonly resolver: DidResolver;
  /** The replay cache shared by every transport of the host. */
  readonly replay: ReplayCache;
  /** The `aud` values the host answers to. */
  readonly audiences: () => readonly string[];
  /** DID methods accepted (default `key` and `web`). */
  readonly methods?: readonly string[];
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
}

/** Why a token was refused (for logs; the caller is told only that the token is invalid). */
export type CallerTokenRefusal =
  | 'malformed'
  | 'alg'
  | 'did'
  | 'kid'
  | 'did_unresolvable'
  | 'key'
  | 'signature'
  | 'claims'
  | 'lifetime'
  | 'replayed';

/** The outcome of {@link checkCallerToken}. */
export type CallerTokenCheck = { ok: true; did: string } | { ok: false; refusal: CallerTokenRefusal };

interface Unverified {
  readonly alg: SignatureAlg;
  readonly kid: string;
  readonly did: string;
}

/** Header and issuer of a token not yet verified; cheap checks first, so a malformed token costs no fetch. */
function readUnverified(token: string, methods: readonly string[]): Unverified | CallerTokenRefusal {
  if (token.length > MAX_TOKEN_CHARS || token.split('.').length !== 3) return 'malformed';
  let header: ReturnType<typeof decodeProtectedHeader>;
  let iss: unknown;
  try {
    header = decodeProtectedHeader(token);
    iss = decodeJwt(token).iss;
  } catch {
    return 'malformed';
  }
  const alg = header.alg;
  if (!isSignatureAlg(alg)) return 'alg';
  if (typeof iss !== 'string' || iss.length > MAX_DID_CHARS || !DID_PATTERN.test(iss)) return 'did';
  if (!methods.includes(iss.split(':')[1] ?? '')) return 'did';
  const kid = header.kid;
  if (typeof kid !== 'string' || !kid.startsWith(`${iss}#`) || kid.length > 2 * MAX_DID_CHARS) return 'kid';
  return { alg, kid, did: iss };
}

/** A method listed under `authentication` (DID Core §5.3.1: the keys that prove control of the DID). */
function authenticationMethod(doc: DidDocument, id: string): VerificationMethod | undefined {
  const absolute = (ref: string): string => (ref.startsWith('#') ? doc.id + ref : ref);
  const declared = new Map((doc.verificationMethod ?? []).map((m) => [absolute(m.id), m]));
  for (const entry of doc.authentication ?? []) {
    const method = typeof entry === 'string' ? declared.get(absolute(entry)) : entry;
    if (method && absolute(method.id) === id && method.controller === doc.id) return method;
  }
  return undefined;
}

/** The caller's key for `kid`; after a miss, once more from a fresh document (a key added since). */
async function callerKey(
  token: Unverified,
  policy: CallerTokenPolicy,
): Promise<KeyObject | CallerTokenRefusal> {
  let method: VerificationMethod | undefined;
  try {
    const options = { signal: policy.signal };
    method = authenticationMethod(await policy.resolver.resolve(token.did, options), token.kid);
    method ??= authenticationMethod(
      await policy.resolver.resolve(token.did, { ...options, refresh: true }),
      token.kid,
    );
  } catch {
    return 'did_unresolvable';
  }
  const key = method ? publicKeyOf(method) : undefined;
  return key && keyFitsAlg(key, token.alg) ? key : 'key';
}

/**
 * Checks a caller token: its shape, algorithm and issuer DID, the `kid` of that DID listed under
 * `authentication` in the document the resolver returns, the signature, `iss` = `sub`, an `aud` the
 * host answers to, `iat`/`exp` within {@link CALLER_TOKEN_SKEW_S} of now and at most
 * {@link CALLER_TOKEN_MAX_LIFETIME_S} apart, and a `jti` not seen before from that DID.
 */
export async function checkCallerToken(token: string, policy: CallerTokenPolicy): Promise<CallerTokenCheck> {
  const unverified = readUnverified(token, policy.methods ?? ['key', 'web']);
  if (typeof unverified === 'string') return { ok: false, refusal: unverified };
  const key = await callerKey(unverified, policy);
  if (typeof key === 'string') return { ok: false, refusal: key };
  const now = (policy.clock ?? systemClock).now();
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
  try {
    ({ payload } = await jwtVerify(token, key, {
      algorithms: [unverified.alg],
      issuer: unverified.did,
      subject: unverified.did,
      audience: [...policy.audiences()],
      requiredClaims: ['iat', 'exp', 'jti', 'sub', 'aud'],
      clockTolerance: CALLER_TOKEN_SKEW_S,
      currentDate: new Date(now),
    }));
  } catch (error) {
    const code = errorCode(error);
    return { ok: false, refusal: code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' ? 'signature' : 'claims' };
  }
  const { iat = 0, exp = 0, jti = '' } = payload;
  if (exp - iat > CALLER_TOKEN_MAX_LIFETIME_S || iat > now / 1000 + CALLER_TOKEN_SKEW_S)
    return { ok: false, refusal: 'lifetime' };
  if (jti === '' || jti.length > MAX_JTI_CHARS) return { ok: false, refusal: 'claims' };
  const fresh = await policy.replay.remember(`${unverified.did} ${jti}`, (exp + CALLER_TOKEN_SKEW_S) * 1000);
  return fresh ? { ok: true, did: unverified.did } : { ok: false, refusal: 'replayed' };
}

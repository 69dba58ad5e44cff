import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../shared/clock.js';
import { checkCallerToken, mintCallerToken, type CallerTokenPolicy } from './caller-token.js';
import { didKeyOf } from './did-key.js';
import { createMemoryReplayCache } from './replay-cache.js';
import { createDidResolver } from './resolver.js';
import { createKeySigner, type Signer } from './signer.js';

const AUD = 'https://host.example';
const T0 = Date.UTC(2026, 0, 1);

function didKeySigner(type: 'ed25519' | 'ec' = 'ed25519'): { signer: Signer; privateKey: KeyObject } {
  const { publicKey, privateKey } =
    type === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { signer: createKeySigner(didKeyOf(publicKey), privateKey), privateKey };
}

function policy(clock: Clock, overrides: Partial<CallerTokenPolicy> = {}): CallerTokenPolicy {
  return {
    resolver: createDidResolver({ clock }),
    replay: createMemoryReplayCache({ clock }),
    audiences: () => [AUD, `${AUD}/.well-known/agent-card.json`],
    clock,
    ...overrides,
  };
}

const at = (ms: number): Clock => ({ now: () => ms });

describe('caller tokens (docs/acmp-identity.md "Callers identified by DID")', () => {
  it.each(['ed25519', 'ec'] as const)('a fresh %s did:key token names its DID', async (type) => {
    const { signer } = didKeySigner(type);
    const token = await mintCallerToken(signer, { audience: AUD, clock: at(T0) });
    expect(await checkCallerToken(token, policy(at(T0 + 1000)))).toEqual({ ok: true, did: signer.did });
  });

  it('accepts the card URL as audience', async () => {
    const { signer } = didKeySigner();
    const token = await mintCallerToken(signer, {
      audience: `${AUD}/.well-known/agent-card.json`,
      clock: at(T0),
    });
    expect(await checkCallerToken(token, policy(at(T0)))).toMatchObject({ ok: true });
  });

  it('refuses the same jti a second time within its lifetime', async () => {
    const { signer } = didKeySigner();
    const token = await mintCallerToken(signer, { audience: AUD, clock: at(T0) });
    const shared = policy(at(T0));
    expect(await checkCallerToken(token, shared)).toMatchObject({ ok: true });
    expect(await checkCallerToken(token, shared)).toEqual({ ok: false, refusal: 'replayed' });
  });

  it('refuses an expired token (past the clock skew)', async () => {
    const { signer } = didKeySigner();
    const token = await mintCallerToken(signer, { audience: AUD, clock: at(T0), lifetimeS: 60 });
    expect(await checkCallerToken(token, policy(at(T0 + 91_000)))).toEqual({ ok: false, refusal: 'claims' });
  });

  it('refuses a token for another host', async () => {
    const { signer } = didKeySigner();
    const token = await mintCallerToken(signer, { audience: 'https://other.example', clock: at(T0) });
    expect(await checkCallerToken(token, policy(at(T0)))).toEqual({ ok: false, refusal: 'claims' });
  });

  it('refuses a token signed by a key the DID document does not list', async () => {
    const { signer } = didKeySigner();
    const { privateKey: other } = didKeySigner();
    const forged = createKeySigner({ did: signer.did, verificationMethod: signer.verificationMethod }, other);
    const token = await mintCallerToken(forged, { audience: AUD, clock: at(T0) });
    expect(await checkCallerToken(token, policy(at(T0)))).toEqual({ ok: false, refusal: 'signature' });
  });

  it('refuses a lifetime over five minutes, and iat in the future', async () => {
    const { signer, privateKey } = didKeySigner();
    const claims = { sub: signer.did, aud: AUD, jti: 'j-1' };
    const header = { alg: 'EdDSA', typ: 'JWT', kid: signer.verificationMethod };
    const s = T0 / 1000;
    const long = await new SignJWT(claims)
      .setProtectedHeader(header)
      .setIssuer(signer.did)
      .setIssuedAt(s)
      .setExpirationTime(s + 301)
      .sign(privateKey);
    const early = await new SignJWT(claims)
      .setProtectedHeader(header)
      .setIssuer(signer.did)
      .setIssuedAt(s + 120)
      .setExpirationTime(s + 180)
      .sign(privateKey);
    expect(await checkCallerToken(long, policy(at(T0)))).toEqual({ ok: false, refusal: 'lifetime' });
    expect(await checkCallerToken(early, policy(at(T0)))).toEqual({ ok: false, refusal: 'lifetime' });
  });

  it('refuses a kid of another DID, an unsupported method and a malformed token, before resolving', async () => {
    const { signer } = didKeySigner();
    const { signer: other } = didKeySigner();
    const mixed = createKeySigner(
      { did: signer.did, verificationMethod: other.verificationMethod },
      generateKeyPairSync('ed25519').privateKey,
    );
    const resolver = { resolve: () => Promise.reject(new Error('must not resolve')) };
    const token = await mintCallerToken(mixed, { audience: AUD, clock: at(T0) });
    const strict = policy(at(T0), { resolver, methods: ['web'] });
    expect(await checkCallerToken(token, policy(at(T0), { resolver }))).toEqual({
      ok: false,
      refusal: 'kid',
    });
    expect(await checkCallerToken(token, strict)).toEqual({ ok: false, refusal: 'did' });
    expect(await checkCallerToken('a.b.c', strict)).toEqual({ ok: false, refusal: 'malformed' });
  });

  it('a full replay cache refuses new tokens rather than forgetting live ones', async () => {
    const replay = createMemoryReplayCache({ maxEntries: 2, clock: at(T0) });
    expect(await replay.remember('a', T0 + 10)).toBe(true);
    expect(await replay.remember('b', T0 + 20)).toBe(true);
    expect(await replay.remember('c', T0 + 30)).toBe(false);
    expect(await replay.remember('a', T0 + 10)).toBe(false);
    const later = createMemoryReplayCache({ maxEntries: 1, clock: at(T0 + 100) });
    expect(await later.remember('x', T0 + 50)).toBe(true);
  });
});

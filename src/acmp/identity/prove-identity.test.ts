import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { didKeyOf } from './did-key.js';
import type { PartyIdentity } from './host-identity.js';
import { answerChallenge, createChallenge, proveIdentity } from './prove-identity.js';
import { createDidResolver } from './resolver.js';
import { createKeySigner } from './signer.js';

function keyIdentity(): PartyIdentity & { did: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const id = didKeyOf(publicKey);
  return { did: id.did, signer: () => createKeySigner(id, privateKey) };
}

async function refusal(work: Promise<unknown>): Promise<unknown> {
  const error = (await work.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: number; data: unknown } | undefined;
  return error && { code: error.code, data: error.data };
}

describe('acmp/proveIdentity challenge (Layer 7 §3)', () => {
  const resolver = createDidResolver();
  const peer = keyIdentity();

  it('accepts the answer to its own nonce by the expected DID', async () => {
    const verified = await proveIdentity((params) => answerChallenge(params, peer), {
      expectedDid: peer.did,
      resolver,
    });
    expect(verified.did).toBe(peer.did);
  });

  it('uses a fresh 128-bit nonce per challenge', () => {
    const a = createChallenge({ expectedDid: peer.did, resolver });
    const b = createChallenge({ expectedDid: peer.did, resolver });
    expect(a.nonce).toMatch(/^n_[0-9a-f]{32}$/);
    expect(a.nonce).not.toBe(b.nonce);
  });

  it('refuses an answer to another nonce (a replayed proof): -36001 nonce', async () => {
    const old = await answerChallenge({ nonce: 'n_earlier' }, peer);
    const challenge = createChallenge({ expectedDid: peer.did, resolver });
    expect(await refusal(challenge.check(old))).toEqual({ code: -36001, data: { check: 'nonce' } });
  });

  it('checks a nonce once: a second check fails -36001 nonce', async () => {
    const challenge = createChallenge({ expectedDid: peer.did, resolver });
    const answer = await answerChallenge({ nonce: challenge.nonce }, peer);
    await challenge.check(answer);
    expect(await refusal(challenge.check(answer))).toEqual({ code: -36001, data: { check: 'nonce' } });
  });

  it('refuses a valid proof by another DID (the substitution attack): -36001 did', async () => {
    const stranger = keyIdentity();
    const challenge = createChallenge({ expectedDid: peer.did, resolver });
    const answer = await answerChallenge({ nonce: challenge.nonce }, stranger);
    expect(await refusal(challenge.check(answer))).toEqual({ code: -36001, data: { check: 'did' } });
  });

  it('refuses a bad signature, a malformed answer, and a peer with no DID to expect', async () => {
    const challenge = createChallenge({ expectedDid: peer.did, resolver });
    const answer = await answerChallenge({ nonce: challenge.nonce }, peer);
    const forged = {
      envelope: {
        ...answer.envelope,
        signature: answer.envelope.signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
      },
    };
    expect(await refusal(challenge.check(forged))).toEqual({ code: -36001, data: { check: 'signature' } });
    const next = createChallenge({ expectedDid: peer.did, resolver });
    expect(await refusal(next.check({ envelope: 'x' }))).toEqual({ code: -36001, data: { check: 'answer' } });
    expect(
      await refusal(proveIdentity((p) => answerChallenge(p, peer), { expectedDid: undefined, resolver })),
    ).toEqual({ code: -36001, data: { check: 'did' } });
  });

  it('a responder without a DID answers -32601', async () => {
    expect(await refusal(answerChallenge({ nonce: 'n_1' }, undefined))).toMatchObject({ code: -32601 });
  });
});

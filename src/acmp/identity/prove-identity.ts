import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { systemClock, type Clock } from '../../shared/clock.js';
import { isJsonObject } from '../../shared/json.js';
import { ACMP_CODE, AcmpError, isAcmpError } from '../wire/errors.js';
import type { ProveIdentityParams } from '../wire/identity-messages.js';
import { signObject, SignatureEnvelopeSchema } from './envelope.js';
import type { PartyIdentity } from './host-identity.js';
import { verifyObject, type DidResolver, type VerifiedSignature } from './verify.js';

/** The `acmp/proveIdentity` result (Layer 7 §3): the envelope over `{nonce, did}`. */
export const ProveIdentityResultSchema = z.looseObject({ envelope: SignatureEnvelopeSchema });
export type ProveIdentityResult = z.infer<typeof ProveIdentityResultSchema>;

/**
 * The responder's side of `acmp/proveIdentity` (Layer 7 §3): signs `{nonce, did}` with its newest key.
 * @throws AcmpError -32601 when the responder has no identity.
 */
export async function answerChallenge(
  params: ProveIdentityParams,
  identity: PartyIdentity | undefined,
  options: { clock?: Clock; signal?: AbortSignal } = {},
): Promise<ProveIdentityResult> {
  const did = identity?.did;
  if (!identity || did === undefined)
    throw new AcmpError(ACMP_CODE.methodNotFound, { detail: 'this party has no DID' });
  const signed = await signObject({ nonce: params.nonce, did }, identity.signer(), {
    clock: options.clock ?? systemClock,
    signal: options.signal,
  });
  return { envelope: signed.sig };
}

/** One challenge of `acmp/proveIdentity`: a fresh nonce, and the check of the answer to it (once). */
export interface IdentityChallenge {
  /** 128 random bits, `n_` + hex. */
  readonly nonce: string;
  /**
   * Checks the peer's answer: an envelope by `expectedDid` over `{nonce, did}` for this nonce.
   * The nonce is spent by the first check, whatever its verdict.
   * @throws AcmpError -36001 `identity_proof_failed` (`data.check`: `answer` malformed, `nonce` spent or
   *   not the one signed, `did` not the expected one, `signature`/`verification_method`/`alg`/`key`);
   *   -36002 when the DID cannot be resolved.
   */
  check(answer: unknown, options?: { signal?: AbortSignal }): Promise<VerifiedSignature>;
}

/** What a challenge is checked against (Layer 7 §3: the expected DID is the one advertised, or the bound payee). */
export interface ChallengeOptions {
  readonly expectedDid: string;
  readonly resolver: DidResolver;
}

function failed(check: string): AcmpError {
  return new AcmpError(ACMP_CODE.identityProofFailed, { check });
}

/** What a buyer or escrow agent challenges a peer with ({@link proveIdentity}). */
export interface PeerChallengeOptions {
  /** The DID the peer must prove; a peer that advertises none fails with -36001 `did`. */
  readonly expectedDid: string | undefined;
  readonly resolver: DidResolver;
  readonly signal?: AbortSignal;
}

/** What a buyer's `proveIdentity()` takes: the resolver, and the DID to expect when not the advertised one. */
export interface IdentityCheckOptions {
  readonly resolver: DidResolver;
  /** Default: the DID the peer advertises (its capability object). */
  readonly expectedDid?: string;
  readonly signal?: AbortSignal;
}

/** A new {@link IdentityChallenge} for the peer that must be `expectedDid`. */
export function createChallenge(options: ChallengeOptions): IdentityChallenge {
  const nonce = `n_${randomBytes(16).toString('hex')}`;
  let spent = false;
  return {
    nonce,
    async check(answer, o) {
      if (spent) throw failed('nonce');
      spent = true;
      const parsed = ProveIdentityResultSchema.safeParse(answer);
      if (!parsed.success) throw failed('answer');
      const { envelope } = parsed.data;
      // The signed object is rebuilt from what the challenger knows: its nonce and the signer's DID.
      const object = { nonce, did: envelope.did, sig: envelope };
      try {
        return await verifyObject(object, {
          resolver: options.resolver,
          expectedDid: options.expectedDid,
          signal: o?.signal,
        });
      } catch (error) {
        if (!isAcmpError(error, ACMP_CODE.signatureInvalid)) throw error;
        const data = error.data;
        const check = isJsonObject(data) && typeof data.check === 'string' ? data.check : undefined;
        throw failed(check === 'payload_hash' ? 'nonce' : (check ?? 'signature'));
      }
    },
  };
}

/**
 * Challenges a peer (Layer 7 §3) through `ask` — the binding's `acmp/proveIdentity` call — with a
 * fresh single-use nonce and checks its answer.
 * @throws AcmpError -36001, -36002 as {@link IdentityChallenge.check}; whatever `ask` throws.
 */
export async function proveIdentity(
  ask: (params: ProveIdentityParams, options: { signal?: AbortSignal }) => Promise<unknown>,
  options: PeerChallengeOptions,
): Promise<VerifiedSignature> {
  const { expectedDid } = options;
  // Without an expected DID any party with any DID could answer (Layer 7 §3): nothing to prove against.
  if (expectedDid === undefined) throw failed('did');
  const challenge = createChallenge({ ...options, expectedDid });
  const answer = await ask({ nonce: challenge.nonce }, { signal: options.signal });
  return challenge.check(answer, { signal: options.signal });
}

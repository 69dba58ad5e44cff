import { LocalError } from '../../shared/errors.js';
import type { AcmpBuyerCore, BuyerEvent, InvokeInput } from './buyer.js';
import { ACMP_CODE, AcmpError, isAcmpError } from '../wire/errors.js';
import type { AcmpResult } from '../wire/task-messages.js';
import { createDidResolver } from '../identity/resolver.js';
import { proveIdentity } from '../identity/prove-identity.js';
import type { ProveIdentityParams } from '../wire/identity-messages.js';
import type { DidResolver, VerifiedSignature } from '../identity/verify.js';

/**
 * When a buyer challenges its provider with `acmp/proveIdentity` (Layer 7 §3: "buyers SHOULD challenge
 * providers before first payment"): before the first paying operation, or never.
 */
export type IdentityChallengeMode = 'before-first-payment' | 'off';

/** The buyer's option (docs/acmp-identity.md "Challenging before the first payment"). */
export interface IdentityChallengePolicy {
  /**
   * Default `before-first-payment` when the provider's DID is known (advertised, or `expectedDid`),
   * `off` when it is not. `before-first-payment` without a DID is a configuration error.
   */
  readonly identityChallenge?: IdentityChallengeMode;
}

/** The binding's `acmp/proveIdentity` call. */
export type AskIdentity = (
  params: ProveIdentityParams,
  options: { signal?: AbortSignal },
) => Promise<unknown>;

/**
 * The buyer's gate before paying one provider: the first paying operation challenges the provider to
 * prove the DID the buyer expects; a verified proof is remembered for the buyer's life (one provider
 * per buyer), a failed one is not (the next paying operation challenges again). Concurrent first
 * payments share one challenge.
 */
export class FirstPaymentGate {
  readonly enabled: boolean;
  private readonly expectedDid: string | undefined;
  private verified: VerifiedSignature | undefined;
  private pending: Promise<VerifiedSignature> | undefined;
  private resolver: DidResolver | undefined;

  /**
   * @throws LocalError `CONFIG_INVALID` when a challenge is asked for but no DID is known to expect.
   */
  constructor(
    private readonly ask: AskIdentity,
    options: {
      mode: IdentityChallengeMode | undefined;
      expectedDid: string | undefined;
      resolver?: DidResolver | undefined;
    },
  ) {
    this.expectedDid = options.expectedDid;
    this.enabled = (options.mode ?? 'before-first-payment') === 'before-first-payment' && !!this.expectedDid;
    this.resolver = options.resolver;
    if (options.mode === 'before-first-payment' && options.expectedDid === undefined)
      throw new LocalError(
        'CONFIG_INVALID',
        "identityChallenge 'before-first-payment' needs the provider DID: it advertises none, so give expectedDid",
      );
  }

  /** The proof this buyer holds, once its provider has been challenged successfully. */
  get proof(): VerifiedSignature | undefined {
    return this.verified;
  }

  /**
   * Counts a proof the buyer obtained itself (its `proveIdentity()`) when it is of the DID this gate
   * expects, so the first payment needs no second challenge.
   */
  remember(proof: VerifiedSignature): VerifiedSignature {
    if (proof.did === this.expectedDid) this.verified ??= proof;
    return proof;
  }

  /**
   * Resolves once the provider has proved its DID (at once after the first success; at once when off).
   * @throws AcmpError -36001 `identity_proof_failed`, -36002; whatever the binding's call throws.
   */
  async beforePayment(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (!this.enabled || this.verified) return;
    this.pending ??= this.challenge(options.signal).finally(() => {
      this.pending = undefined;
    });
    await this.pending;
  }

  private async challenge(signal: AbortSignal | undefined): Promise<VerifiedSignature> {
    this.resolver ??= createDidResolver();
    let proof: VerifiedSignature;
    try {
      proof = await proveIdentity(this.ask, {
        expectedDid: this.expectedDid,
        resolver: this.resolver,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      // A provider that names a DID but will not prove it is refused like one that proves it badly.
      if (isAcmpError(error, ACMP_CODE.methodNotFound))
        throw new AcmpError(ACMP_CODE.identityProofFailed, { check: 'answer', reason: 'not_served' });
      throw error;
    }
    this.verified = proof;
    return proof;
  }
}

/** What a payment waits for first: the provider's proof of its DID ({@link FirstPaymentGate}). */
export type PaymentGate = Pick<FirstPaymentGate, 'beforePayment'>;

/**
 * A way of paying the provider that is connected outside the buyer — the escrow client
 * (docs/acmp-escrow.md §13) — and handed to it: the buyer puts its paying calls behind its own gate.
 * `T` is what the buyer then exposes (the gated copy).
 */
export interface PaymentGated<T> {
  gatedBy(gate: PaymentGate): T;
}

/**
 * An invoke pays when it names a price ceiling, an escrow or an accepted offer (an agreement): those
 * are the invokes a provider can charge for.
 */
function pays(input: InvokeInput): boolean {
  return input.max_price_cu !== undefined || input.escrow_id !== undefined || input.offer_id !== undefined;
}

/** The buyer core with each paying invoke passing the {@link FirstPaymentGate} before anything is sent. */
export function gatedBuyerCore(core: AcmpBuyerCore, gate: FirstPaymentGate): AcmpBuyerCore {
  if (!gate.enabled) return core;
  async function* stream(input: InvokeInput, o?: { signal?: AbortSignal }): AsyncGenerator<BuyerEvent> {
    if (pays(input)) await gate.beforePayment(o);
    yield* core.stream(input, o);
  }
  return Object.freeze({
    async invoke(input: InvokeInput, o?: { signal?: AbortSignal }): Promise<AcmpResult> {
      if (pays(input)) await gate.beforePayment(o);
      return core.invoke(input, o);
    },
    stream,
  });
}

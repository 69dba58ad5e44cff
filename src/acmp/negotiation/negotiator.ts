import type { Metrics } from '../../shared/metrics.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import type { InvokeParams } from '../wire/task-messages.js';
import { offeredProofs } from '../provider/provider-checks.js';
import type { Signer } from '../identity/signer.js';
import type { InvokeAgreement, ProviderNegotiation } from '../provider/provider-negotiation.js';
import type { AcmpCapability } from '../provider/provider-types.js';
import { withSignature } from '../identity/signed.js';
import type { TaskScope } from '../provider/task-store.js';
import type { Agreement, AgreementStore } from './agreement-store.js';
import type { AcceptParams, Ack, Offer, OfferRequestParams } from '../wire/negotiation-messages.js';
import { checkInvokeTerms, consumedError } from './invoke-agreement.js';
import { buyerDigest, decodeOfferId, encodeOfferId, offerKeyOf, type OfferTerms } from './offer-codec.js';
import { DEFAULT_MAX_TOKENS_EST, quotePrice } from './quote-price.js';

/** Negotiation settings a provider advertises and enforces (docs/acmp-negotiation.md). */
export interface NegotiationOptions {
  readonly store: AgreementStore;
  /** Offer validity: the default when the buyer asks none, and the range requests are clamped to (L6 §3 MAY). */
  readonly offerValidMs?: { readonly default: number; readonly min: number; readonly max: number };
  /** How long after accept the invoke may arrive (default 10 minutes). */
  readonly invokeWindowMs?: number;
  /** Challenge windows the provider agrees to; a request outside is clamped (L6 §2.1 "confirmed or adjusted"). */
  readonly challengeWindowMs?: { readonly min: number; readonly max: number };
  /** Input-size tolerance of a quote for an input-priced capability (default 0.1 = 10%). */
  readonly inputTolerance?: number;
  /**
   * The largest `input_tokens_est` quoted (default {@link DEFAULT_MAX_TOKENS_EST}); a larger one is -32602
   * `input_tokens_est_out_of_range`.
   */
  readonly maxInputTokensEst?: number;
  /**
   * Resolves a task an invoke names in `referenceTaskIds` (A2A) to the negotiation it was: `undefined` when
   * the task is not a negotiation, `offerKey: null` when it ended without an agreement (session mode).
   */
  readonly references?: (taskId: string) => Promise<{ readonly offerKey: string | null } | undefined>;
  /** Signs every offer issued (Layer 7 §4.1: binds the provider to its price); unsigned without it. */
  readonly signer?: Signer;
  readonly clock?: Clock;
  /** Counts offers and accepts by outcome (docs/operations.md "Metrics"). */
  readonly metrics?: Metrics;
}

/** What a revised offer of session mode may change (the counter terms, docs/acmp-negotiation.md). */
export interface OfferChanges {
  readonly price_cu?: number;
  readonly proof_method?: string;
  readonly challenge_window_ms?: number;
}

const DEFAULT_VALIDITY = { default: 5_000, min: 50, max: 60_000 };
const DEFAULT_INVOKE_WINDOW_MS = 600_000;

/**
 * Layer 6 for one provider: stateless quotes (L6 §3 MUST: an offer is a self-verifying promise, nothing is
 * stored), accepts that write one agreement exactly once (L6 §2.2, §6), and the agreement an invoke
 * executes under (L6 §4: the agreed price is charged, the agreed proof method is required).
 */
export class Negotiator implements ProviderNegotiation {
  private readonly clock: Clock;
  /** Offer validity: default, and the range requests are clamped to (advertised on the card). */
  readonly validity: { readonly default: number; readonly min: number; readonly max: number };

  constructor(
    private readonly options: NegotiationOptions,
    private readonly capabilities: ReadonlyMap<string, AcmpCapability>,
  ) {
    this.clock = options.clock ?? systemClock;
    this.validity = options.offerValidMs ?? DEFAULT_VALIDITY;
  }

  /**
   * `acmp/offerRequest` (L6 §2.1). In session mode the offer is bound to `session` (acceptable only there).
   * @throws AcmpError -33002 unknown capability, -33006 proof method not offered, -33001 above `max_price_cu`.
   */
  quote(params: OfferRequestParams, scope: TaskScope, session?: string): Promise<Offer> {
    return this.counted('offer', this.offer(params, scope, session));
  }

  private async offer(params: OfferRequestParams, scope: TaskScope, session?: string): Promise<Offer> {
    const capability = this.capabilities.get(params.capability);
    if (!capability) throw new AcmpError(ACMP_CODE.capabilityNotFound, { capability: params.capability });
    if (params.proof_method !== undefined && !offeredProofs(capability).includes(params.proof_method)) {
      throw new AcmpError(ACMP_CODE.proofUnsupported, { proof_method: params.proof_method });
    }
    const maxTokens = this.options.maxInputTokensEst ?? DEFAULT_MAX_TOKENS_EST;
    if (params.input_tokens_est !== undefined && params.input_tokens_est > maxTokens) {
      throw new AcmpError(ACMP_CODE.invalidParams, {
        reason: 'input_tokens_est_out_of_range',
        max: maxTokens,
      });
    }
    const priced = quotePrice(capability, params.input_tokens_est, this.options.inputTolerance ?? 0.1);
    // L6 §2.1: price_cu MUST be ≤ max_price_cu; the provider rejects rather than quote above it.
    if (params.max_price_cu !== undefined && priced.price > params.max_price_cu) {
      throw new AcmpError(ACMP_CODE.budgetExceeded, {
        min_price_cu: priced.price,
        capability: capability.id,
      });
    }
    const terms: OfferTerms = {
      capability: capability.id,
      price_cu: priced.price,
      valid_until_ms: this.validUntil(params.offer_valid_ms),
      buyer: buyerDigest(scope),
      ...(session !== undefined ? { session } : {}),
      ...(params.proof_method !== undefined ? { proof_method: params.proof_method } : {}),
      ...(params.challenge_window_ms !== undefined
        ? { challenge_window_ms: this.window(params.challenge_window_ms) }
        : {}),
      ...(priced.inputTokensMax !== undefined ? { input_tokens_max: priced.inputTokensMax } : {}),
    };
    return this.issue(terms);
  }

  /**
   * A revised offer (session mode, ours): the terms of `offerId` with `changes`, valid for a fresh period
   * (`validMs` clamped like a quote's), for the same buyer and session.
   * @throws AcmpError -34001 when `offerId` is not this provider's; -33006 for a proof method not offered.
   */
  async revise(offerId: string, changes: OfferChanges, validMs?: number): Promise<Offer> {
    const terms = decodeOfferId(offerId, await this.options.store.offerKey());
    if (!terms) throw new AcmpError(ACMP_CODE.offerNotFound, {});
    const capability = this.capabilities.get(terms.capability);
    if (!capability) throw new AcmpError(ACMP_CODE.capabilityNotFound, { capability: terms.capability });
    if (changes.proof_method !== undefined && !offeredProofs(capability).includes(changes.proof_method)) {
      throw new AcmpError(ACMP_CODE.proofUnsupported, { proof_method: changes.proof_method });
    }
    return this.issue({
      ...terms,
      ...(changes.price_cu !== undefined ? { price_cu: changes.price_cu } : {}),
      ...(changes.proof_method !== undefined ? { proof_method: changes.proof_method } : {}),
      ...(changes.challenge_window_ms !== undefined
        ? { challenge_window_ms: this.window(changes.challenge_window_ms) }
        : {}),
      valid_until_ms: this.validUntil(validMs),
    });
  }

  /** The agreement an accepted offer wrote, if any. */
  agreementOf(offerId: string): Promise<Agreement | undefined> {
    return this.options.store.get(offerKeyOf(offerId));
  }

  /**
   * `acmp/accept` (L6 §2.2): records the agreement once. An exact retry (same caller, offer and escrow)
   * gets the same Ack; any other second acceptance -34003. `session` is the session accepting (session
   * mode); an offer of a session is accepted in that session only, a flat offer only flat.
   * @throws AcmpError -34001 (not an offer of this provider for this caller and session), -34002 expired,
   *   -34003, -33005 `escrow_committed` when the escrow already backs another agreement.
   */
  accept(params: AcceptParams, scope: TaskScope, session?: string): Promise<Ack> {
    return this.counted('agreement', this.agree(params, scope, session));
  }

  /** Counts one answered offer request or accept: `ok`, or the ACMP code it failed with. */
  private async counted<T>(step: 'offer' | 'agreement', work: Promise<T>): Promise<T> {
    try {
      const value = await work;
      this.options.metrics?.negotiation(step, undefined);
      return value;
    } catch (error) {
      this.options.metrics?.negotiation(step, error instanceof AcmpError ? error.code : ACMP_CODE.internal);
      throw error;
    }
  }

  private async agree(params: AcceptParams, scope: TaskScope, session?: string): Promise<Ack> {
    const terms = decodeOfferId(params.offer_id, await this.options.store.offerKey());
    // An offer quoted for another agent is as unknown to this caller as a forged one (no existence leak).
    if (!terms || terms.buyer !== buyerDigest(scope) || terms.session !== session)
      throw new AcmpError(ACMP_CODE.offerNotFound, {});
    const now = this.clock.now();
    const escrowId = params.escrow_id ?? null;
    const agreement: Agreement = {
      offerKey: offerKeyOf(params.offer_id),
      offerId: params.offer_id,
      scope,
      terms,
      escrowId,
      acceptedAt: now,
      invokeBy: now + (this.options.invokeWindowMs ?? DEFAULT_INVOKE_WINDOW_MS),
      consumedBy: null,
    };
    const ack: Ack = { offer_id: params.offer_id, escrow_id: escrowId, price_cu: terms.price_cu };
    const known = await this.options.store.get(agreement.offerKey);
    if (known) return replayOrRefuse(known, escrowId, ack);
    // L6 §3: an expired offer MUST be rejected at accept.
    if (now > terms.valid_until_ms) throw new AcmpError(ACMP_CODE.offerExpired, {});
    const outcome = await this.options.store.accept(agreement);
    if (outcome.kind === 'exists') return replayOrRefuse(outcome.existing, escrowId, ack);
    if (outcome.kind === 'escrow_committed')
      throw new AcmpError(ACMP_CODE.escrowInvalid, { escrow_id: escrowId, reason: 'escrow_committed' });
    return ack;
  }

  /**
   * The agreement an invoke executes under (docs/acmp-negotiation.md "From agreement to invoke"): named by `offer_id` in the params (ours, the L6
   * candidate for escrow-less links), by a negotiation task in `references` (A2A `referenceTaskIds`,
   * session mode) or by its `escrow_id` (L6 §2.2); `undefined` means direct mode.
   * @throws AcmpError -32602 with `data.reason` `agreement_unknown|agreement_foreign|agreement_capability|
   *   agreement_consumed|agreement_expired`, -33006 `differs_from_agreement`, -33001 with `min_price_cu`
   *   (below the agreed price, or `input_exceeds_quote`).
   */
  async agreementFor(
    params: InvokeParams,
    scope: TaskScope,
    references: readonly string[] = [],
  ): Promise<InvokeAgreement | undefined> {
    const agreement = await this.checkedAgreement(params, scope, references);
    return (
      agreement && {
        priceCu: agreement.terms.price_cu,
        consume: (taskId) => this.consume(agreement, taskId),
        release: (taskId) => this.release(agreement, taskId),
      }
    );
  }

  /** The agreement {@link agreementFor} names, once the invoke is checked against its terms. */
  private async checkedAgreement(
    params: InvokeParams,
    scope: TaskScope,
    references: readonly string[],
  ): Promise<Agreement | undefined> {
    const agreement = await this.find(params, references);
    if (!agreement) return undefined;
    checkInvokeTerms(agreement, params, { scope, clock: this.clock });
    return agreement;
  }

  /**
   * Binds the agreement to the task, atomically across hosts (one invoke per agreement).
   * @throws AcmpError as {@link consumedError} when another task took it first.
   */
  private async consume(agreement: Agreement, taskId: string): Promise<void> {
    if (!(await this.options.store.consume(agreement.offerKey, taskId)))
      throw consumedError(agreement, taskId);
  }

  /** Undoes {@link consume} for a task refused after all (its id belonged to another caller). */
  private release(agreement: Agreement, taskId: string): Promise<void> {
    return this.options.store.unconsume(agreement.offerKey, taskId);
  }

  private async find(params: InvokeParams, references: readonly string[]): Promise<Agreement | undefined> {
    const unknown = (): AcmpError =>
      new AcmpError(ACMP_CODE.invalidParams, { task_id: params.task_id, reason: 'agreement_unknown' });
    // Ours, so not in the invoke schema: a loose field (docs/acmp-negotiation.md "From agreement to invoke").
    const offerId = params.offer_id;
    if (typeof offerId === 'string')
      return (await this.options.store.get(offerKeyOf(offerId))) ?? Promise.reject(unknown());
    for (const taskId of references) {
      const negotiation = await this.options.references?.(taskId);
      if (negotiation === undefined) continue;
      // A negotiation named as the invoke's basis that ended without an agreement is no basis at all.
      const agreement =
        negotiation.offerKey === null ? undefined : await this.options.store.get(negotiation.offerKey);
      if (!agreement) throw unknown();
      return agreement;
    }
    return params.escrow_id !== undefined ? this.options.store.byEscrow(params.escrow_id) : undefined;
  }

  private validUntil(requested: number | undefined): number {
    const validMs = Math.min(
      this.validity.max,
      Math.max(this.validity.min, requested ?? this.validity.default),
    );
    return Math.floor(this.clock.now() + validMs);
  }

  private async issue(terms: OfferTerms): Promise<Offer> {
    const offerId = encodeOfferId(terms, await this.options.store.offerKey());
    const { buyer: _buyer, session: _session, ...visible } = terms;
    const offer: Offer = { offer_id: offerId, ...visible };
    const { signer } = this.options;
    return signer ? withSignature(offer, signer, { clock: this.clock }) : offer;
  }

  private window(requested: number): number {
    const range = this.options.challengeWindowMs;
    return range ? Math.min(range.max, Math.max(range.min, requested)) : requested;
  }
}

function replayOrRefuse(known: Agreement, escrowId: string | null, ack: Ack): Ack {
  // L6 §6 -34003, except an exact retry of the caller's own acceptance (docs/acmp-negotiation.md "Flat mode").
  if (known.escrowId === escrowId) return ack;
  throw new AcmpError(ACMP_CODE.alreadyAccepted, {});
}

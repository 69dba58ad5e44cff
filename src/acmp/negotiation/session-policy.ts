import { offeredProofs } from '../provider/provider-checks.js';
import type { AcmpCapability } from '../provider/provider-types.js';
import type { CounterOfferParams, Offer } from '../wire/negotiation-messages.js';
import type { OfferChanges } from './negotiator.js';

/** What a provider's counter policy is asked: the buyer's counter to the standing offer. */
export interface CounterInput {
  readonly capability: AcmpCapability;
  readonly standing: Offer;
  readonly counter: CounterOfferParams;
  /** The price of the session's first offer. */
  readonly listPrice: number;
  /** The round the answer will have. */
  readonly round: number;
}

/** A policy's answer: revise the offer with these changes, or decline (restate the standing offer). */
export type CounterDecision =
  { readonly kind: 'revise'; readonly changes: OfferChanges } | { readonly kind: 'decline' };

/** How a provider answers counters (docs/acmp-negotiation.md "Counter policy"); may be asynchronous. */
export type CounterPolicy = (input: CounterInput) => CounterDecision | Promise<CounterDecision>;

/** The counter terms the default policy considers (advertised as `counter_terms`). */
export const DEFAULT_COUNTER_TERMS = ['price_cu', 'challenge_window_ms', 'proof_method'] as const;

/**
 * The default counter policy: the price comes down to the buyer's, but never below `floor` × the first
 * offer's price (rounded to 10⁻⁹ CU); another offered proof method and another challenge window are
 * granted (the window within the provider's range). A counter that changes nothing is declined.
 */
export function concedeToFloor(floor = 0.8): CounterPolicy {
  return ({ capability, standing, counter, listPrice }) => {
    const changes: { price_cu?: number; proof_method?: string; challenge_window_ms?: number } = {};
    if (counter.price_cu !== undefined && counter.price_cu < standing.price_cu) {
      const price = Math.max(nano(listPrice * floor), counter.price_cu);
      if (price < standing.price_cu) changes.price_cu = price;
    }
    const proof = counter.proof_method;
    if (proof !== undefined && proof !== standing.proof_method && offeredProofs(capability).includes(proof))
      changes.proof_method = proof;
    const window = counter.challenge_window_ms;
    if (window !== undefined && window !== standing.challenge_window_ms) changes.challenge_window_ms = window;
    return Object.keys(changes).length > 0 ? { kind: 'revise', changes } : { kind: 'decline' };
  };
}

/** Rounds up to whole 10⁻⁹ CU, so prices stay short decimals. */
function nano(cu: number): number {
  return Math.ceil(Math.round(cu * 1e12) / 1e3) / 1e9;
}

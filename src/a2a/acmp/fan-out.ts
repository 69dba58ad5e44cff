import { ACMP_CODE, AcmpError } from '../../acmp/wire/errors.js';
import type { Offer } from '../../acmp/wire/negotiation-messages.js';
import { estimateTokens } from '../../acmp/provider/provider-checks.js';
import type { Payload } from '../../acmp/wire/task-messages.js';
import type { AcmpBuyer } from './buyer.js';
import { checkOffer, type NegotiatedAgreement, type NegotiationRequest } from './negotiation-client.js';

/** One provider's answer in a fan-out: its offer, or why it has none (`B`: the buyers fanned out to). */
export type FanOutQuote<B extends AcmpBuyer = AcmpBuyer> =
  { readonly buyer: B; readonly offer: Offer } | { readonly buyer: B; readonly error: unknown };

/** The outcome of {@link negotiateBest}: the provider chosen, its agreement, and every answer. */
export interface FanOutResult<B extends AcmpBuyer = AcmpBuyer> {
  readonly buyer: B;
  readonly agreement: NegotiatedAgreement;
  readonly quotes: readonly FanOutQuote<B>[];
}

/** Options of {@link negotiateBest}. */
export interface FanOutOptions {
  /** How long to wait for quotes (default 2 s); late answers are ignored. */
  readonly deadlineMs?: number;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
}

/**
 * The L6 §5 quasi-auction: quote every provider concurrently (flat mode, stateless for them) within a
 * deadline, accept the cheapest offer that matches the request (price ≤ `max_price_cu`, proof method,
 * still valid) and let the others expire — no retraction message exists or is needed. If the cheapest
 * acceptance fails (expired meanwhile, say), the next cheapest is tried.
 * @throws AcmpError -33001 `no_acceptable_offer` when no provider offered acceptable terms in time.
 */
export async function negotiateBest<B extends AcmpBuyer>(
  buyers: readonly B[],
  request: NegotiationRequest & { readonly input?: Payload },
  options: FanOutOptions = {},
): Promise<FanOutResult<B>> {
  const now = options.now ?? Date.now;
  const deadline = AbortSignal.timeout(options.deadlineMs ?? 2_000);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  const { escrow_id: escrowId, input, ...asked } = request;
  const params =
    input !== undefined && asked.input_tokens_est === undefined
      ? { ...asked, input_tokens_est: estimateTokens(input) }
      : asked;
  const quotes: FanOutQuote<B>[] = await Promise.all(
    buyers.map((buyer) =>
      buyer.quote(params, { signal }).then(
        (offer): FanOutQuote<B> => ({ buyer, offer }),
        (error: unknown): FanOutQuote<B> => ({ buyer, error }),
      ),
    ),
  );
  const candidates = quotes
    .flatMap((q) => ('offer' in q && acceptable(q.offer, params, now()) ? [q] : []))
    .sort((a, b) => a.offer.price_cu - b.offer.price_cu);
  for (const { buyer, offer } of candidates) {
    try {
      const ack = await buyer.accept(
        { offer_id: offer.offer_id, ...(escrowId !== undefined ? { escrow_id: escrowId } : {}) },
        { signal: options.signal ?? AbortSignal.timeout(10_000) },
      );
      const agreement: NegotiatedAgreement = { offer, ack, ...(input !== undefined ? { input } : {}) };
      return { buyer, agreement, quotes };
    } catch (error) {
      quotes.push({ buyer, error });
    }
  }
  throw new AcmpError(ACMP_CODE.budgetExceeded, {
    reason: 'no_acceptable_offer',
    providers: buyers.length,
    offers: candidates.length,
  });
}

function acceptable(offer: Offer, params: Parameters<typeof checkOffer>[1], now: number): boolean {
  try {
    checkOffer(offer, params, now);
    return true;
  } catch {
    return false;
  }
}

import { AcmpError } from '../acmp/wire/errors.js';
import type { Ack, AcceptParams, Offer, OfferRequestParams } from '../acmp/wire/negotiation-messages.js';
import type { SpendTicket, Wallet } from './wallet.js';

/** The Layer 6 calls of a buyer on any binding (A2A, MCP). */
export interface OfferCalls {
  quote(params: OfferRequestParams, options?: { signal?: AbortSignal }): Promise<Offer>;
  accept(params: AcceptParams, options?: { signal?: AbortSignal }): Promise<Ack>;
}

/** How many quoted offers a wallet-guarded buyer remembers the price of (for a later `accept`). */
const REMEMBERED_OFFERS = 1_000;

/**
 * Quote and accept with every acceptance passing through the wallet first (Layer 7 §6.2): the price of
 * the offer (as this buyer was quoted it) is checked against `per_task_max_cu` (and the counterparty's)
 * before the accept is sent, and the acceptance is logged (`accept`). The money itself is counted where
 * it moves — at the lock, or at a direct invoke (docs/acmp-wallet.md "What counts"). An accept of an
 * offer this buyer did not quote asks for an unbounded amount, which a configured per-task limit refuses.
 */
export function walletOfferCalls(inner: OfferCalls, wallet: Wallet, counterparty: string): OfferCalls {
  const offers = new Map<string, Offer>();
  return Object.freeze({
    async quote(params: OfferRequestParams, o?: { signal?: AbortSignal }): Promise<Offer> {
      const offer = await inner.quote(params, o);
      if (offers.size >= REMEMBERED_OFFERS) offers.delete(offers.keys().next().value ?? '');
      offers.set(offer.offer_id, offer);
      return offer;
    },
    async accept(params: AcceptParams, o?: { signal?: AbortSignal }): Promise<Ack> {
      const price = offers.get(params.offer_id)?.price_cu ?? Number.POSITIVE_INFINITY;
      const ticket = await authorizeAccept(wallet, counterparty, { price, escrowId: params.escrow_id });
      try {
        const ack = await inner.accept(params, o);
        await wallet.settle(ticket, { ok: true, costCu: ack.price_cu });
        return ack;
      } catch (error) {
        const definite = error instanceof AcmpError;
        await wallet.settle(ticket, {
          ok: false,
          definite,
          outcome: definite ? `refused:${error.code}` : 'unknown',
        });
        throw error;
      }
    },
  });
}

/** Checks an acceptance of `price` against the limits (L7 §6.2); logged when it is settled. */
export function authorizeAccept(
  wallet: Wallet,
  counterparty: string,
  terms: { price: number; escrowId: string | undefined },
): Promise<SpendTicket> {
  return wallet.authorize({
    kind: 'accept',
    amount_cu: terms.price,
    counterparty,
    ...(terms.escrowId === undefined ? {} : { escrow_id: terms.escrowId }),
  });
}

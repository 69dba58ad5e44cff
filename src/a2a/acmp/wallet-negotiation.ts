import type { AgentCard } from '@a2a-js/sdk';
import type { CapabilityObject } from '../../acmp/messages.js';
import { agentIdOf } from '../escrow/wallet-client.js';
import type { Ack, AcceptParams, Offer, OfferRequestParams } from '../../acmp/negotiation/messages.js';
import { ACMP_CODE, AcmpError } from '../../acmp/errors.js';
import type { Wallet } from '../../wallet/wallet.js';
import {
  checkOffer,
  type AcmpNegotiationClient,
  type NegotiatedAgreement,
  type NegotiationRequest,
} from './negotiation-client.js';
import type { Counter } from './session-client.js';
import type { BuyerNegotiation } from './buyer-negotiation.js';

/** The provider as the wallet names it: its advertised `provider_id` (Layer 1 §4), else its card's URL. */
export function walletNameOf(card: AgentCard, capability: CapabilityObject): string {
  return typeof capability.provider_id === 'string' ? capability.provider_id : agentIdOf(card);
}

/**
 * The buyer's negotiation with its wallet: the flat client and, for a session (which accepts inside its
 * counter loop), the request with a counter policy that checks each decision to accept. Unchanged
 * without a wallet.
 */
export function guardNegotiation(
  flat: AcmpNegotiationClient,
  wallet: Wallet | undefined,
  counterparty: string,
): { flat: AcmpNegotiationClient; request: (request: BuyerNegotiation) => BuyerNegotiation } {
  if (!wallet) return { flat, request: (request) => request };
  return {
    flat: walletNegotiation(flat, wallet, counterparty),
    request: (request) =>
      request.mode === 'session' || request.counter !== undefined
        ? {
            ...request,
            counter: walletCounter(request.counter, wallet, { counterparty, escrowId: request.escrow_id }),
          }
        : request,
  };
}

/** How many quoted offers a wallet-guarded buyer remembers the price of (for a later `accept`). */
const REMEMBERED_OFFERS = 1_000;

/**
 * Flat negotiation with every acceptance passing through the wallet first (Layer 7 §6.2): the offer's
 * price is checked against `per_task_max_cu` (and the counterparty's) before the accept is sent, and the
 * acceptance is logged (`accept`). The money itself is counted where it moves — at the lock, or at a
 * direct invoke (docs/acmp-wallet.md "What counts"). An accept of an offer this buyer did not quote asks
 * for an unbounded amount, which a configured per-task limit refuses.
 */
function walletNegotiation(
  inner: AcmpNegotiationClient,
  wallet: Wallet,
  counterparty: string,
): AcmpNegotiationClient {
  return new WalletNegotiation(inner, wallet, counterparty);
}

class WalletNegotiation implements AcmpNegotiationClient {
  readonly #inner: AcmpNegotiationClient;
  readonly #wallet: Wallet;
  readonly #counterparty: string;
  readonly #offers = new Map<string, Offer>();

  constructor(inner: AcmpNegotiationClient, wallet: Wallet, counterparty: string) {
    this.#inner = inner;
    this.#wallet = wallet;
    this.#counterparty = counterparty;
  }

  async quote(params: OfferRequestParams, o?: { signal?: AbortSignal }): Promise<Offer> {
    const offer = await this.#inner.quote(params, o);
    if (this.#offers.size >= REMEMBERED_OFFERS) this.#offers.delete(this.#offers.keys().next().value ?? '');
    this.#offers.set(offer.offer_id, offer);
    return offer;
  }

  async accept(params: AcceptParams, o?: { signal?: AbortSignal }): Promise<Ack> {
    const offer = this.#offers.get(params.offer_id);
    const ticket = await authorizeAccept(this.#wallet, this.#counterparty, {
      price: offer?.price_cu ?? Number.POSITIVE_INFINITY,
      escrowId: params.escrow_id,
    });
    try {
      const ack = await this.#inner.accept(params, o);
      await this.#wallet.settle(ticket, { ok: true, costCu: ack.price_cu });
      return ack;
    } catch (error) {
      const definite = error instanceof AcmpError;
      await this.#wallet.settle(ticket, {
        ok: false,
        definite,
        outcome: definite ? `refused:${error.code}` : 'unknown',
      });
      throw error;
    }
  }

  async negotiate(request: NegotiationRequest, o?: { signal?: AbortSignal }): Promise<NegotiatedAgreement> {
    const { escrow_id: escrowId, ...params } = request;
    const offer = await this.quote(params, o);
    checkOffer(offer, params, Date.now());
    const ack = await this.accept(
      { offer_id: offer.offer_id, ...(escrowId !== undefined ? { escrow_id: escrowId } : {}) },
      o,
    );
    if (ack.offer_id !== offer.offer_id || ack.price_cu !== offer.price_cu)
      throw new AcmpError(ACMP_CODE.internal, {
        reason: 'protocol_violation',
        detail: 'the Ack does not match the offer',
      });
    return { offer, ack };
  }
}

/**
 * A session's counter policy whose every decision to accept passes through the wallet first: a denied
 * price throws before the acceptance is sent (the session is then left to expire).
 */
function walletCounter(
  counter: Counter | undefined,
  wallet: Wallet,
  scope: { counterparty: string; escrowId: string | undefined },
): Counter {
  return async (offer, context) => {
    const decision = counter ? ((await counter(offer, context)) ?? 'accept') : 'accept';
    if (decision === 'accept' || (typeof decision === 'object' && context.final)) {
      const ticket = await authorizeAccept(wallet, scope.counterparty, {
        price: offer.price_cu,
        escrowId: scope.escrowId,
      });
      await wallet.settle(ticket, { ok: true, costCu: offer.price_cu });
    }
    return decision;
  };
}

function authorizeAccept(
  wallet: Wallet,
  counterparty: string,
  terms: { price: number; escrowId: string | undefined },
): ReturnType<Wallet['authorize']> {
  return wallet.authorize({
    kind: 'accept',
    amount_cu: terms.price,
    counterparty,
    ...(terms.escrowId === undefined ? {} : { escrow_id: terms.escrowId }),
  });
}

import type { AgentCard } from '@a2a-js/sdk';
import type { CapabilityObject } from '../../acmp/wire/messages.js';
import { agentIdOf } from '../agent-id.js';
import { ACMP_CODE, AcmpError } from '../../acmp/wire/errors.js';
import { authorizeAccept, walletOfferCalls } from '../../wallet/accept-guard.js';
import type { Wallet } from '../../wallet/wallet.js';
import { checkOffer, type AcmpNegotiationClient, type NegotiatedAgreement } from './negotiation-client.js';
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

/** Flat negotiation whose quote and accept pass through the wallet (accept-guard.ts). */
function walletNegotiation(
  inner: AcmpNegotiationClient,
  wallet: Wallet,
  counterparty: string,
): AcmpNegotiationClient {
  const calls = walletOfferCalls(inner, wallet, counterparty);
  return {
    quote: (params, o) => calls.quote(params, o),
    accept: (params, o) => calls.accept(params, o),
    async negotiate(request, o): Promise<NegotiatedAgreement> {
      const { escrow_id: escrowId, ...params } = request;
      const offer = await calls.quote(params, o);
      checkOffer(offer, params, Date.now());
      const ack = await calls.accept(
        { offer_id: offer.offer_id, ...(escrowId !== undefined ? { escrow_id: escrowId } : {}) },
        o,
      );
      if (ack.offer_id !== offer.offer_id || ack.price_cu !== offer.price_cu)
        throw new AcmpError(ACMP_CODE.internal, {
          reason: 'protocol_violation',
          detail: 'the Ack does not match the offer',
        });
      return { offer, ack };
    },
  };
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

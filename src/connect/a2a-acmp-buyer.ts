import {
  acmpBuyerOver,
  connectAcmpPeer,
  type AcmpBuyer,
  type AcmpBuyerConnectOptions,
} from '../a2a/acmp/buyer.js';
import type { FanOutResult } from '../a2a/acmp/fan-out.js';
import { connectBuyerEscrow, type BuyerEscrow, type BuyerEscrowOptions } from '../a2a/escrow/buyer-escrow.js';
import { systemIds } from '../shared/ids.js';

/*
 * The A2A ACMP buyer with its escrow client (docs/acmp-escrow.md §13). The two are separate bindings of
 * src/a2a/ that never import each other; this is where both are reached: the escrow is connected here and
 * handed to the buyer, which puts its paying calls behind its identity gate (Layer 7 §3).
 */

/** Options of {@link createA2AAcmpBuyer}: the buyer's, and the escrow agent to pay through. */
export interface A2AAcmpBuyerOptions extends AcmpBuyerConnectOptions {
  /** The escrow agent to pay through (Layer 4): the buyer then has {@link AcmpBuyer.escrow}. */
  escrow?: BuyerEscrowOptions;
}

/** A buyer connected to one provider over A2A, paying through its escrow agent when one was given. */
export type A2AAcmpBuyer = AcmpBuyer<BuyerEscrow>;

/** The outcome of `negotiateBest` over such buyers. */
export type A2AFanOutResult = FanOutResult<A2AAcmpBuyer>;

/**
 * Reads the provider's card first (A2A binding §2: a buyer MUST NOT rely on a feature the provider did
 * not advertise), connects the escrow client when `escrow` is given (with the buyer's `wallet`
 * outermost, docs/acmp-wallet.md), then returns a buyer whose calls travel as ACMP data parts over the
 * SDK's client.
 * @throws AcmpError -33007 when the card advertises no ACMP provider extension, or the escrow agent's
 *   card no escrow agent.
 */
export async function createA2AAcmpBuyer(options: A2AAcmpBuyerOptions): Promise<A2AAcmpBuyer> {
  const peer = await connectAcmpPeer(options);
  const escrow =
    options.escrow &&
    (await connectBuyerEscrow({
      ...options.escrow,
      ids: options.escrow.ids ?? systemIds,
      wallet: options.wallet,
    }));
  return acmpBuyerOver(peer, options, escrow);
}

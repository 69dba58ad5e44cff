import type { InvokeParams } from '../wire/task-messages.js';
import type { AcceptParams, Ack, Offer, OfferRequestParams } from '../wire/negotiation-messages.js';
import type { TaskScope } from './task-store.js';

/*
 * The provider's port to Layer 6 (docs/architecture.md "The layers"): what the provider core needs of
 * negotiation, declared here so that src/acmp/negotiation/ implements it and src/acmp/provider/ never imports it.
 * Whoever composes a provider builds the implementation and hands it over.
 */

/** The agreement an invoke executes under, as the provider sees it (L6 §4). */
export interface InvokeAgreement {
  /** The agreed price: the invoke is charged exactly this (L6 §4). */
  readonly priceCu: number;
  /**
   * Binds the agreement to `taskId`, atomically across hosts (one invoke per agreement).
   * @throws AcmpError -33005 `committed` or -32602 `agreement_consumed` when another task took it first.
   */
  consume(taskId: string): Promise<void>;
  /** Undoes {@link consume} for a task refused after all (its id belonged to another caller). */
  release(taskId: string): Promise<void>;
}

/** Layer 6 as the provider serves it: offers, accepts, and the agreement an invoke runs under. */
export interface ProviderNegotiation {
  /**
   * `acmp/offerRequest` (L6 §2.1): a stateless, self-verifying offer.
   * @throws AcmpError -33002 unknown capability, -33006 proof method not offered, -33001 above `max_price_cu`.
   */
  quote(params: OfferRequestParams, scope: TaskScope): Promise<Offer>;
  /**
   * `acmp/accept` (L6 §2.2): records the agreement once.
   * @throws AcmpError -34001, -34002, -34003, -33005 `escrow_committed`.
   */
  accept(params: AcceptParams, scope: TaskScope): Promise<Ack>;
  /**
   * The agreement an invoke executes under (docs/acmp-negotiation.md "From agreement to invoke"), named by
   * the params, by a negotiation task in `references` (A2A `referenceTaskIds`) or by its escrow;
   * `undefined` means direct mode.
   * @throws AcmpError when the invoke does not meet the agreement's terms (-32602, -33006, -33001).
   */
  agreementFor(
    params: InvokeParams,
    scope: TaskScope,
    references?: readonly string[],
  ): Promise<InvokeAgreement | undefined>;
}

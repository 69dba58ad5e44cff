import type { TaskScope } from '../provider/task-store.js';
import type { OfferTerms } from './offer-codec.js';

/**
 * An accepted offer (L6 §2.2: "acceptance is the moment terms become binding"): the only durable state of
 * a negotiation (L6 §3). Keyed by a digest of the offer id; one per escrow; consumed by one invoke.
 */
export interface Agreement {
  /** sha256 hex of the offer id (offer ids are long: they carry their terms). */
  readonly offerKey: string;
  readonly offerId: string;
  readonly scope: TaskScope;
  readonly terms: OfferTerms;
  /** The escrow named at accept; `null` for direct settlement. */
  readonly escrowId: string | null;
  readonly acceptedAt: number;
  /** The invoke must arrive by then (docs/acmp-negotiation.md "From agreement to invoke"). */
  readonly invokeBy: number;
  /** The task that executes the agreement, once one was admitted. */
  readonly consumedBy: string | null;
}

/** What an accept found. */
export type AcceptOutcome =
  | { readonly kind: 'accepted' }
  | { readonly kind: 'exists'; readonly existing: Agreement }
  | { readonly kind: 'escrow_committed' };

/**
 * Agreements shared by every host of a provider (memory, SQLite, PostgreSQL). Every write is one atomic
 * statement, so an offer is accepted once and an agreement consumed once across hosts and retries.
 */
export interface AgreementStore {
  /** The key offers are authenticated with; the same for every host sharing the store. */
  offerKey(): Promise<Buffer>;
  /** Inserts the agreement unless its offer was accepted already or its escrow backs another agreement. */
  accept(agreement: Agreement): Promise<AcceptOutcome>;
  get(offerKey: string): Promise<Agreement | undefined>;
  /** The agreement an escrow backs, if any. */
  byEscrow(escrowId: string): Promise<Agreement | undefined>;
  /** Marks the agreement consumed by `taskId` unless another task consumed it; true when it is `taskId`'s. */
  consume(offerKey: string, taskId: string): Promise<boolean>;
  /** Undoes {@link consume} for a task that was refused after all. */
  unconsume(offerKey: string, taskId: string): Promise<void>;
}

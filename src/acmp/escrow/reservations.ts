import type { JsonValue } from '../../shared/json.js';

/**
 * What a provider remembers about the escrow backing a task (docs/acmp-escrow.md "The provider side"):
 * `reserved` when the invoke was admitted, `delivered` once the result is stored (with the cost and proof
 * to claim), then `claimed` or `settled` (the buyer released), or `void` (the task failed or never ran).
 */
export type ReservationState = 'reserved' | 'delivered' | 'claimed' | 'settled' | 'void';

export interface Reservation {
  readonly escrowId: string;
  readonly taskId: string;
  readonly state: ReservationState;
  /** The CU the provider may claim (nano-CU): the task's cost once delivered, its ceiling before. */
  readonly amount: bigint;
  readonly proof: JsonValue | null;
  /** When the provider claims if the buyer has not released (delivered + claim delay). */
  readonly claimAfter: number | null;
  readonly createdAt: number;
}

/** The provider's reservations, shared by every host of the provider (memory, SQLite, PostgreSQL). */
/** A reservation asked for: the escrow, the task it backs, the CU ceiling (nano-CU) and when (epoch ms). */
export interface ReservationRequest {
  readonly escrowId: string;
  readonly taskId: string;
  readonly amount: bigint;
  readonly at: number;
}

export interface ReservationStore {
  /**
   * Reserves an escrow for one task, atomically: one escrow backs one task (a `void` reservation — its
   * task failed or never ran — gives the escrow up). Returns the reservation that holds the escrow: this
   * one, or an earlier one (of this task on a retry, or of another task).
   */
  reserve(hold: ReservationRequest): Promise<Reservation>;
  /** Reservations in a state, oldest first. */
  inState(state: ReservationState, limit: number): Promise<Reservation[]>;
  /** Moves a reservation from one state to another (compare-and-set); false when it was not in `from`. */
  update(
    escrowId: string,
    from: ReservationState,
    to: Partial<Omit<Reservation, 'escrowId' | 'taskId' | 'createdAt'>> & { state: ReservationState },
  ): Promise<boolean>;
  get(escrowId: string): Promise<Reservation | undefined>;
}

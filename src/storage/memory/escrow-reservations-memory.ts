import type {
  Reservation,
  ReservationRequest,
  ReservationState,
  ReservationStore,
} from '../../acmp/escrow/reservations.js';

/** {@link ReservationStore} in memory (a provider without a database). */
export class MemoryReservationStore implements ReservationStore {
  private readonly rows = new Map<string, Reservation>();

  reserve({ escrowId, taskId, amount, at }: ReservationRequest): Promise<Reservation> {
    const held = this.rows.get(escrowId);
    if (held && held.state !== 'void') return Promise.resolve(held);
    const fresh: Reservation = {
      escrowId,
      taskId,
      state: 'reserved',
      amount,
      proof: null,
      claimAfter: null,
      createdAt: at,
    };
    this.rows.set(escrowId, fresh);
    return Promise.resolve(fresh);
  }

  inState(state: ReservationState, limit: number): Promise<Reservation[]> {
    return Promise.resolve([...this.rows.values()].filter((r) => r.state === state).slice(0, limit));
  }

  update(
    escrowId: string,
    from: ReservationState,
    to: Parameters<ReservationStore['update']>[2],
  ): Promise<boolean> {
    const row = this.rows.get(escrowId);
    if (row?.state !== from) return Promise.resolve(false);
    this.rows.set(escrowId, { ...row, ...to });
    return Promise.resolve(true);
  }

  get(escrowId: string): Promise<Reservation | undefined> {
    return Promise.resolve(this.rows.get(escrowId));
  }
}

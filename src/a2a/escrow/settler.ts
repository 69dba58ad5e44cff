import { isAcmpError } from '../../acmp/wire/errors.js';
import { formatCu, parseCu, roundCu } from '../../acmp/escrow/amounts.js';
import { ESCROW_METHOD } from '../../acmp/escrow/constants.js';
import type { PayoutEntry } from '../../acmp/escrow/payout-route.js';
import type { Reservation, ReservationStore } from '../../acmp/escrow/reservations.js';
import type { AcmpTaskRecord } from '../../acmp/provider/task-store.js';
import { timerClockOf, type Clock, type TimerClock, type TimerHandle } from '../../shared/clock.js';
import type { JsonValue } from '../../shared/json.js';
import { errorFields, silentLogger, type Logger } from '../../shared/logger.js';
import { acmpRootOf } from '../acmp-part.js';
import { decodeRequest } from '../acmp-part.js';
import type { EscrowClient } from './client.js';

/** Options of {@link EscrowSettler}. */
export interface EscrowSettlerOptions {
  agent: () => Promise<EscrowClient>;
  reservations: ReservationStore;
  /** The provider's task record (the outcome decides what is claimed). */
  task: (taskId: string) => Promise<AcmpTaskRecord | undefined>;
  claimDelayMs: number;
  /**
   * Where the provider wants to be paid (Layer 7 §6.4): sent with each claim (ours, docs/acmp-escrow.md
   * §9.1), so the escrow agent pays that account. Kept fixed while claims may be retried: a retried
   * op_ref with another list is an op_ref conflict.
   */
  payout?: readonly PayoutEntry[];
  /** A reservation whose task never appears in the store after this long is void (default 5 min). */
  orphanMs?: number;
  /** Time and the tick's timer; a clock without timers uses the system's. */
  clock?: Clock | TimerClock;
  logger?: Logger;
}

/**
 * The provider's safety path [L4 §1, §4.5]: once a task backed by an escrow has delivered its result, the
 * provider waits `claimDelayMs` for the buyer's release; if the escrow still owes the task's `cost_cu`,
 * it claims what is owed with the result's proof (op_ref `claim-<task_id>`, so a retry or a second host
 * never claims twice). A failed or cancelled task claims nothing (docs/acmp-escrow.md §12 "The provider side": no cancel fee).
 */
export class EscrowSettler {
  private readonly clock: TimerClock;
  private readonly logger: Logger;
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: EscrowSettlerOptions) {
    this.clock = timerClockOf(options.clock);
    this.logger = options.logger ?? silentLogger;
  }

  start(intervalMs: number): void {
    this.timer ??= this.clock
      .setInterval(
        () =>
          void this.tick().catch((error: unknown) =>
            this.logger.warn('escrow.settle_failed', errorFields(error)),
          ),
        intervalMs,
      )
      .background();
  }

  async stop(): Promise<void> {
    this.timer?.cancel();
    this.timer = undefined;
    await this.running;
  }

  /** One pass: record deliveries, then claim what is owed and overdue. */
  tick(): Promise<void> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<void> {
    const { reservations } = this.options;
    for (const r of await reservations.inState('reserved', 50)) await this.deliver(r);
    const now = this.clock.now();
    for (const r of await reservations.inState('delivered', 50))
      if (r.claimAfter !== null && r.claimAfter <= now) await this.settle(r);
  }

  private async deliver(r: Reservation): Promise<void> {
    const record = await this.options.task(r.taskId);
    const { reservations } = this.options;
    if (!record) {
      if (this.clock.now() - r.createdAt > (this.options.orphanMs ?? 300_000))
        await reservations.update(r.escrowId, 'reserved', { state: 'void' });
      return;
    }
    if (record.state !== 'finished' || !record.outcome) return;
    // Only the task whose invoke named this escrow is paid from it (a task id taken by another caller's
    // task meanwhile is not this reservation's task).
    if (record.outcome.kind === 'error' || escrowOf(record) !== r.escrowId) {
      await reservations.update(r.escrowId, 'reserved', { state: 'void' });
      return;
    }
    const { result } = record.outcome;
    // Never more than the result's cost, whatever its precision.
    const amount = roundCu(result.cost_cu, 'down');
    const claimAfter = (record.finishedAt ?? this.clock.now()) + this.options.claimDelayMs;
    await reservations.update(r.escrowId, 'reserved', {
      state: amount > 0n ? 'delivered' : 'settled',
      amount,
      proof: (result.proof ?? null) as JsonValue,
      claimAfter,
    });
  }

  private async settle(r: Reservation): Promise<void> {
    const { reservations } = this.options;
    try {
      const agent = await this.options.agent();
      const status = await agent.status(r.escrowId);
      const released = parseCu(Number(status.released_cu));
      const owed = r.amount - (released.ok ? released.nano : 0n);
      if (owed <= 0n || status.state === 'closed') {
        await reservations.update(r.escrowId, 'delivered', { state: 'settled' });
        return;
      }
      if (status.state !== 'open') {
        // A claim is pending (ours, filed before a restart) or disputed: the agent decides from here.
        await reservations.update(r.escrowId, 'delivered', { state: 'claimed' });
        return;
      }
      const remaining = parseCu(status.remaining_cu);
      const amount = remaining.ok && remaining.nano < owed ? remaining.nano : owed;
      await agent.call(ESCROW_METHOD.claim, {
        op_ref: `claim-${r.taskId}`,
        escrow_id: r.escrowId,
        amount_cu: formatCu(amount),
        task_id: r.taskId,
        proof: r.proof ?? {},
        ...(this.options.payout ? { payout: [...this.options.payout] } : {}),
      });
      await reservations.update(r.escrowId, 'delivered', { state: 'claimed' });
    } catch (error) {
      if (isAcmpError(error, -35003) || isAcmpError(error, -35004)) {
        this.logger.warn('escrow.claim_refused', { escrow_id: r.escrowId, ...errorFields(error) });
        await reservations.update(r.escrowId, 'delivered', { state: 'void' });
        return;
      }
      this.logger.warn('escrow.claim_failed', { escrow_id: r.escrowId, ...errorFields(error) });
    }
  }
}

/** The `escrow_id` the task's stored invoke named. */
function escrowOf(record: AcmpTaskRecord): string | undefined {
  try {
    const root = acmpRootOf(decodeRequest(record.request));
    return root?.kind === 'request' && root.method === 'acmp/invoke' ? root.params.escrow_id : undefined;
  } catch {
    return undefined;
  }
}

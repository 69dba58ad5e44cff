import type { Metrics } from '../../shared/metrics.js';
import type { TimerClock, TimerHandle } from '../../shared/clock.js';
import { errorFields, type Logger } from '../../shared/logger.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import type { AcmpTaskStore } from './task-store.js';

/** What {@link HostLiveness} needs. */
export interface HostLivenessDeps {
  readonly store: AcmpTaskStore;
  readonly hostId: string;
  readonly clock: TimerClock;
  readonly logger: Logger;
  /** Counts the tasks this host reaps (docs/operations.md "Metrics"). */
  readonly metrics: Metrics;
  /** How often this host records that it is alive, and looks for abandoned tasks. */
  readonly beatMs: number;
  /** How long a host may stay silent before its running tasks count as abandoned. */
  readonly windowMs: number;
  /** Ids of the tasks this host runs now. */
  readonly running: () => readonly string[];
  /** Told which of this host's running tasks were finished elsewhere (a signal may have been lost). */
  readonly onLost: (taskId: string) => void;
}

const REAP_BATCH = 100;

/**
 * Liveness of the hosts sharing one task store (Layer 1 §3.6 across hosts). Each host writes one row and
 * refreshes it every `beatMs` — one write per host, however many tasks it runs. On the same tick it
 * finishes, as -33003 `owner_lost`, every running task whose host has been silent for `windowMs`, so an
 * abandoned record becomes terminal by itself and its followers on every host are told (the store
 * signals `finished`). A record is finished once: the write is a compare-and-set on `running`.
 */
export class HostLiveness {
  private timer: TimerHandle | undefined;
  private ticking: Promise<void> | undefined;

  constructor(private readonly deps: HostLivenessDeps) {}

  /** Records this host as alive, then keeps doing so. */
  async start(): Promise<void> {
    await this.deps.store.beat({ hostId: this.deps.hostId, at: this.deps.clock.now() });
    this.timer = this.deps.clock
      .setInterval(() => {
        this.ticking ??= this.tick().finally(() => (this.ticking = undefined));
      }, this.deps.beatMs)
      .background();
  }

  /** One round: beat, reap abandoned tasks, notice local tasks finished elsewhere. */
  async tick(): Promise<void> {
    const { store, hostId, clock, logger } = this.deps;
    try {
      const now = clock.now();
      await store.beat({ hostId, at: now });
      for (const taskId of await store.orphans(now - this.deps.windowMs, REAP_BATCH)) {
        const error = new AcmpError(ACMP_CODE.timeout, { task_id: taskId, reason: 'owner_lost' }).toObject();
        const finished = await store.finish(taskId, {
          outcome: { kind: 'error', error },
          end: 'completed',
          at: now,
        });
        if (!finished?.won) continue;
        logger.warn('acmp.task_owner_lost', { task_id: taskId, host: finished.record.hostId });
        this.deps.metrics.acmpEvent('owner_lost_reap');
      }
      const running = this.deps.running();
      if (running.length > 0)
        for (const taskId of await store.lost(hostId, running)) this.deps.onLost(taskId);
    } catch (error) {
      logger.warn('acmp.liveness_tick_failed', errorFields(error));
    }
  }

  /** Stops beating and removes this host's row (its tasks have been finished by then). */
  async stop(): Promise<void> {
    this.timer?.cancel();
    await this.ticking;
    try {
      await this.deps.store.retire(this.deps.hostId);
    } catch (error) {
      this.deps.logger.warn('acmp.retire_failed', errorFields(error));
    }
  }
}

import type { TimerClock, TimerHandle } from '../../shared/clock.js';
import { errorFields, type Logger } from '../../shared/logger.js';
import type { Metrics } from '../../shared/metrics.js';
import { sameScope } from '../provider/provider-checks.js';
import type { TaskScope } from '../provider/task-store.js';
import type { Negotiator } from './negotiator.js';
import {
  ackReplyOf,
  expiryAt,
  isEnded,
  sessionTransition,
  type NegotiationSession,
  type SessionEnd,
} from './session.js';
import type { SessionOutcome } from './session-rules.js';
import type { SessionStore } from './session-store.js';

const SWEEP_BATCH = 100;

/** What {@link SessionRecords} works with. */
export interface SessionRecordsOptions {
  readonly store: SessionStore;
  /** Where an acceptance in progress finds the agreement it may have written. */
  readonly negotiator: Negotiator;
  readonly clock: TimerClock;
  readonly logger: Logger;
  readonly metrics?: Metrics | undefined;
}

/**
 * The session records of session mode (docs/acmp-negotiation.md "Session mode"): every change a
 * compare-and-set on the record, so racing messages on any number of hosts leave one winner, and expiry
 * evaluated on every read and by a sweep.
 */
export class SessionRecords {
  private sweeper: TimerHandle | undefined;
  private sweeping = false;

  constructor(private readonly options: SessionRecordsOptions) {}

  /** Starts the expiry sweep, every `everyMs`. */
  startSweep(everyMs: number): void {
    this.sweeper ??= this.options.clock.setInterval(() => void this.sweep(), everyMs).background();
  }

  stopSweep(): void {
    this.sweeper?.cancel();
    this.sweeper = undefined;
  }

  /** A session of `scope`, after expiring it if it fell due (lazy evaluation on every read). */
  async get(id: string, scope: TaskScope): Promise<NegotiationSession | undefined> {
    const session = await this.options.store.get(id);
    if (!session || !sameScope(session.scope, scope)) return undefined;
    const end = expiryAt(session, this.options.clock.now());
    return end ? this.expire(session, end) : session;
  }

  /**
   * Every change of a session, by compare-and-set: the one place a session is known to have ended (the
   * write that moved it to a terminal phase won), so each end counts once however many hosts race.
   */
  async write(next: NegotiationSession): Promise<boolean> {
    const won = await this.options.store.update(next);
    if (won && isEnded(next.phase)) this.options.metrics?.negotiationSession(next.phase);
    return won;
  }

  /** Writes the answer; if the session moved meanwhile (expired, canceled), shows it as it stands. */
  async settle(next: NegotiationSession): Promise<SessionOutcome> {
    if (await this.write(next)) return { kind: 'session', session: next };
    const current = await this.options.store.get(next.id);
    return current ? { kind: 'session', session: current } : { kind: 'not_found' };
  }

  /** Expires the due sessions (of `scope`, or of every caller), a batch at a time. */
  async expireDue(scope?: TaskScope): Promise<void> {
    const now = this.options.clock.now();
    for (const session of await this.options.store.due(now, SWEEP_BATCH, scope)) {
      const end = expiryAt(session, now);
      if (end) await this.expire(session, end);
    }
  }

  /**
   * Ends a due session. An acceptance in progress whose agreement was written (its host died before
   * completing) completes as accepted instead, so a session never hides an agreement.
   */
  private async expire(session: NegotiationSession, end: SessionEnd): Promise<NegotiationSession> {
    const agreement =
      session.phase === 'accepting'
        ? await this.options.negotiator.agreementOf(session.standing.offer_id)
        : undefined;
    const next = agreement
      ? sessionTransition.accepted(
          session,
          { reply: ackReplyOf(session, agreement), agreementKey: agreement.offerKey },
          end.at,
        )
      : sessionTransition.ended(session, end);
    if (await this.write(next)) return next;
    return (await this.options.store.get(session.id)) ?? next;
  }

  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      await this.expireDue();
    } catch (error) {
      this.options.logger.warn('acmp.session_sweep_failed', errorFields(error));
    } finally {
      this.sweeping = false;
    }
  }
}

import { timerClockOf, type Clock, type TimerClock } from '../../shared/clock.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import type { Metrics } from '../../shared/metrics.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import type { AcmpCapability } from '../provider/provider-types.js';
import type { TaskScope } from '../provider/task-store.js';
import type { AcceptParams, CounterOfferParams } from '../wire/negotiation-messages.js';
import type { Negotiator } from './negotiator.js';
import {
  ackReplyOf,
  openedSession,
  sessionTransition,
  type NegotiationSession,
  type OfferReply,
} from './session.js';
import { concedeToFloor, DEFAULT_COUNTER_TERMS, type CounterPolicy } from './session-policy.js';
import {
  judgeResume,
  refused,
  sessionRefusal,
  type OpenRequest,
  type ResumeRequest,
  type SessionOutcome,
} from './session-rules.js';
import { SessionRecords } from './session-records.js';
import type { SessionListQuery, SessionStore } from './session-store.js';

/** Session-mode settings a provider advertises (card params, docs/acmp-negotiation.md) and enforces. */
export interface SessionOptions {
  /** Offers per session, the first included (default 3): `max_rounds - 1` counters. */
  readonly maxRounds?: number;
  /** `session_ttl_ms`: a session ends this long after it opened (default 60 s). */
  readonly sessionTtlMs?: number;
  /** Open sessions per caller (default 8). */
  readonly maxOpenSessions?: number;
  /** How the provider answers counters (default {@link concedeToFloor}). */
  readonly policy?: CounterPolicy;
  /** The counter terms advertised (default price, challenge window, proof method). */
  readonly counterTerms?: readonly string[];
  /** How often the expiry sweep looks for due sessions of every host (default 1 s). */
  readonly sweepMs?: number;
}

/** What {@link NegotiationSessions} works with. */
export interface SessionServiceOptions extends SessionOptions {
  readonly store: SessionStore;
  /** The same negotiator (and agreement store) as flat mode: accepts write the same agreements. */
  readonly negotiator: Negotiator;
  readonly capabilities: ReadonlyMap<string, AcmpCapability>;
  /** Time and the expiry sweep's timer; a clock without timers uses the system's. */
  readonly clock?: Clock | TimerClock;
  readonly ids?: IdSource;
  readonly logger?: Logger;
  /** Counts sessions opened and ended (docs/operations.md "Metrics"). */
  readonly metrics?: Metrics;
}

/** Resume attempts before a session that keeps changing under us is answered `not_your_turn`. */
const MAX_RACES = 3;

/**
 * Session mode (ours, docs/acmp-negotiation.md "Session mode"): one negotiation per record, opened by an
 * `acmp/offerRequest`, resumed by counter-offers (at most `max_rounds - 1`) or an acceptance, ended by
 * the acceptance, expiry or cancel. Every change is a compare-and-set on the record, so racing messages
 * on any number of hosts leave one winner. Expiry is evaluated on every read and by a sweep.
 */
export class NegotiationSessions {
  readonly maxRounds: number;
  readonly sessionTtlMs: number;
  readonly maxOpenSessions: number;
  private readonly store: SessionStore;
  private readonly negotiator: Negotiator;
  private readonly policy: CounterPolicy;
  private readonly clock: TimerClock;
  private readonly ids: IdSource;
  private readonly logger: Logger;
  private readonly records: SessionRecords;

  constructor(private readonly options: SessionServiceOptions) {
    this.maxRounds = options.maxRounds ?? 3;
    this.sessionTtlMs = options.sessionTtlMs ?? 60_000;
    this.maxOpenSessions = options.maxOpenSessions ?? 8;
    this.store = options.store;
    this.negotiator = options.negotiator;
    this.policy = options.policy ?? concedeToFloor();
    this.clock = timerClockOf(options.clock);
    this.ids = options.ids ?? systemIds;
    this.logger = options.logger ?? silentLogger;
    this.records = new SessionRecords({
      store: this.store,
      negotiator: this.negotiator,
      clock: this.clock,
      logger: this.logger,
      metrics: options.metrics,
    });
  }

  /** The card params of the session extension (docs/acmp-negotiation.md "Agent Card"). */
  cardParams(): Record<string, unknown> {
    return {
      max_rounds: this.maxRounds,
      offer_valid_ms: { ...this.negotiator.validity },
      session_ttl_ms: this.sessionTtlMs,
      max_open_sessions: this.maxOpenSessions,
      counter_terms: [...(this.options.counterTerms ?? DEFAULT_COUNTER_TERMS)],
    };
  }

  /** Starts the expiry sweep. */
  start(): void {
    this.records.startSweep(this.options.sweepMs ?? 1_000);
  }

  async close(): Promise<void> {
    this.records.stopSweep();
    await this.store.close?.();
  }

  /**
   * Opens a session: quotes (a refusal creates nothing), then stores the session with the offer standing.
   * A retry of the opening message replays the session; the caller's open sessions are capped.
   */
  async open(request: OpenRequest): Promise<SessionOutcome> {
    const known = await this.store.byOpenMessage(request.scope, request.messageId);
    if (known) return this.replayOpen(known, request);
    const id = this.ids.newId('neg');
    const contextId = request.contextId || this.ids.newId('ctx');
    let reply: OfferReply;
    try {
      reply = {
        kind: 'offer',
        offer: await this.negotiator.quote(request.params, request.scope, id),
        round: 1,
      };
    } catch (error) {
      return refused(error, this.logger);
    }
    const now = this.clock.now();
    const session = openedSession({
      id,
      contextId,
      scope: request.scope,
      turn: {
        messageId: request.messageId,
        hash: request.hash,
        request: request.encode(id, contextId),
        at: now,
        reply,
      },
      maxRounds: this.maxRounds,
      expiresAt: now + this.sessionTtlMs,
    });
    const created = await this.store.create(session, this.maxOpenSessions, now);
    switch (created.kind) {
      case 'created':
        this.options.metrics?.negotiationSession('opened');
        return { kind: 'session', session };
      case 'exists':
        return this.replayOpen(created.existing, request);
      case 'cap_reached':
        this.logger.warn('acmp.limit_refused', {
          limit: 'max_open_sessions',
          caller: request.scope.agent,
          max: this.maxOpenSessions,
        });
        return sessionRefusal('max_open_sessions', { max_open_sessions: this.maxOpenSessions });
    }
  }

  /** Resumes a session with a counter-offer or an acceptance (judged by {@link judgeResume}). */
  async resume(request: ResumeRequest): Promise<SessionOutcome> {
    for (let attempt = 0; attempt < MAX_RACES; attempt++) {
      const session = await this.get(request.taskId, request.scope);
      if (!session) return { kind: 'not_found' };
      const verdict = judgeResume(session, request);
      // A retry of an acceptance whose host stopped before completing it finishes it (idempotent accept).
      if (verdict.kind === 'finish_accept')
        return request.call.method === 'accept'
          ? this.finishAccept(session, request.call.params)
          : { kind: 'session', session };
      if (verdict.kind !== 'proceed') return verdict;
      const now = this.clock.now();
      const turn = {
        messageId: request.messageId,
        hash: request.hash,
        request: request.encode(session.id, session.contextId),
        at: now,
      };
      const phase = request.call.method === 'counter' ? 'quoting' : 'accepting';
      const begun = sessionTransition.begin(session, { phase, turn }, now);
      // Lost the race: judge again on the version that won.
      if (!(await this.records.write(begun))) continue;
      return request.call.method === 'counter'
        ? this.answerCounter(begun, request.call.params)
        : this.finishAccept(begun, request.call.params);
    }
    return sessionRefusal('not_your_turn');
  }

  /** A2A CancelTask: an open session (not while an acceptance is being recorded) ends `canceled`. */
  async cancel(
    id: string,
    scope: TaskScope,
  ): Promise<{ kind: 'unknown' } | { kind: 'canceled' | 'not_cancelable'; session: NegotiationSession }> {
    for (let attempt = 0; attempt < MAX_RACES; attempt++) {
      const session = await this.get(id, scope);
      if (!session) return { kind: 'unknown' };
      if (session.phase === 'canceled') return { kind: 'canceled', session };
      if (session.phase !== 'offer' && session.phase !== 'quoting')
        return { kind: 'not_cancelable', session };
      const ended = sessionTransition.ended(session, { kind: 'canceled', at: this.clock.now() });
      if (await this.records.write(ended)) return { kind: 'canceled', session: ended };
    }
    const session = await this.get(id, scope);
    return session ? { kind: 'not_cancelable', session } : { kind: 'unknown' };
  }

  /** A session of `scope`, after expiring it if it fell due (lazy evaluation on every read). */
  get(id: string, scope: TaskScope): Promise<NegotiationSession | undefined> {
    return this.records.get(id, scope);
  }

  /** The sessions of `scope` (its due sessions expired first), filtered and paged. */
  async list(
    scope: TaskScope,
    query: SessionListQuery,
  ): Promise<{ sessions: NegotiationSession[]; total: number }> {
    await this.records.expireDue(scope);
    return this.store.list(scope, query);
  }

  /** Calls `listener` whenever the session may have changed, on any host. */
  watch(id: string, listener: () => void): () => void {
    return this.store.watch(id, listener);
  }

  private async replayOpen(session: NegotiationSession, request: OpenRequest): Promise<SessionOutcome> {
    if (session.turns[0]?.hash !== request.hash)
      return {
        kind: 'refused',
        error: new AcmpError(ACMP_CODE.invalidParams, { reason: 'message_id_reused' }),
      };
    return { kind: 'session', session: (await this.get(session.id, request.scope)) ?? session };
  }

  private async answerCounter(
    session: NegotiationSession,
    counter: CounterOfferParams,
  ): Promise<SessionOutcome> {
    const standing = session.standing;
    const round = session.round + 1;
    try {
      const capability = this.options.capabilities.get(standing.capability);
      const decision = capability
        ? await this.policy({ capability, standing, counter, listPrice: session.listPrice, round })
        : { kind: 'decline' as const };
      const reply: OfferReply =
        decision.kind === 'revise'
          ? {
              kind: 'offer',
              offer: await this.negotiator.revise(standing.offer_id, decision.changes),
              round,
              supersedes: standing.offer_id,
            }
          : { kind: 'offer', offer: standing, round, declined: true };
      return await this.records.settle(sessionTransition.offered(session, reply, this.clock.now()));
    } catch (error) {
      return this.undo(session, error);
    }
  }

  /** Records the acceptance through the negotiator (one agreement, as in flat mode), then completes. */
  private async finishAccept(session: NegotiationSession, params: AcceptParams): Promise<SessionOutcome> {
    try {
      await this.negotiator.accept(
        {
          offer_id: params.offer_id,
          ...(params.escrow_id !== undefined ? { escrow_id: params.escrow_id } : {}),
        },
        session.scope,
        session.id,
      );
      const agreement = await this.negotiator.agreementOf(params.offer_id);
      if (!agreement) throw new AcmpError(ACMP_CODE.internal);
      const acceptance = { reply: ackReplyOf(session, agreement), agreementKey: agreement.offerKey };
      return await this.records.settle(sessionTransition.accepted(session, acceptance, this.clock.now()));
    } catch (error) {
      return this.undo(session, error);
    }
  }

  /** The pending turn was refused: the session goes back to its standing offer. */
  private async undo(session: NegotiationSession, error: unknown): Promise<SessionOutcome> {
    await this.records.write(sessionTransition.restore(session, this.clock.now()));
    return refused(error, this.logger);
  }
}

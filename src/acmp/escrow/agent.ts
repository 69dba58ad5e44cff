import type { Metrics } from '../../shared/metrics.js';
import { timerClockOf, type Clock, type TimerClock, type TimerHandle } from '../../shared/clock.js';
import { ANONYMOUS_IDENTITY } from '../../shared/identity.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { errorFields, silentLogger, type Logger } from '../../shared/logger.js';
import { AcmpError } from '../wire/errors.js';
import { payloadHashOf } from '../identity/envelope.js';
import { createDidResolver } from '../identity/resolver.js';
import type { DidResolver } from '../identity/verify.js';
import {
  DEFAULT_ESCROW_SETTINGS,
  ESCROW_METHOD,
  type EscrowMethod,
  type EscrowSettings,
} from './constants.js';
import { escrowError, toEscrowErrorObject } from './errors.js';
import { countFunds, persist, type Done } from './outcomes.js';
import { logOf, routeHeld } from './payout-config.js';
import { verifyBeforeLock } from './signed-requests.js';
import { lockInTransaction, operateInTransaction } from './transactions.js';
import { parseEscrowCommand, type EscrowCommand, type EscrowParams } from './messages.js';
import type { EscrowRecord } from './record.js';
import { advance, resolveDispute } from './state-machine.js';
import type { EscrowListQuery, EscrowParty, EscrowStore } from './store.js';
import { TransitionLog, type Payout } from './transitions.js';
import type { EscrowAnswer, EscrowCaller, PayoutRail } from './agent-types.js';

export type { EscrowAnswer, EscrowCaller, PayoutRail } from './agent-types.js';

/** Options of {@link createEscrowAgent}. */
export interface EscrowAgentOptions {
  store: EscrowStore;
  settings?: EscrowSettings;
  rail?: PayoutRail;
  /**
   * Resolves the DIDs of DID-bound escrows (Layer 7 §2.1; default: did:web and did:key with the
   * defaults of {@link createDidResolver}): their claims and disputes are verified against them.
   */
  resolver?: DidResolver;
  /** Time and the tick's timer; a clock without timers uses the system's. */
  clock?: Clock | TimerClock;
  ids?: IdSource;
  logger?: Logger;
  /** Counts requests by method and outcome and CU moved, reads CU held (docs/operations.md "Metrics"). */
  metrics?: Metrics;
  /** Called after a transition committed and before its payouts run (tests crash the process here). */
  beforePayout?: (payouts: readonly Payout[]) => void;
}

/**
 * A transport-free Layer 4 escrow agent over one {@link EscrowStore}: each operation is one transaction
 * on the locked escrow (or the buyer's account, for a lock) that applies what time did, the operation,
 * its op_ref record and its pending payouts together; payouts run after the commit [L4 §6].
 */
export class EscrowAgent {
  readonly settings: EscrowSettings;
  private readonly store: EscrowStore;
  private readonly rail: PayoutRail;
  private readonly resolver: DidResolver;
  private readonly clock: TimerClock;
  private readonly ids: IdSource;
  private readonly logger: Logger;
  private timer: TimerHandle | undefined;
  private ticking: Promise<void> | undefined;
  private readonly committed = new Set<(record: EscrowRecord) => void>();

  constructor(private readonly options: EscrowAgentOptions) {
    this.store = options.store;
    this.settings = options.settings ?? DEFAULT_ESCROW_SETTINGS;
    this.rail = options.rail ?? { pay: async (p, at) => void (await this.store.applyPayout(p.payoutId, at)) };
    this.clock = timerClockOf(options.clock);
    // A party's DID is named by strangers: its did:web is fetched from public addresses only.
    this.resolver = options.resolver ?? createDidResolver({ clock: this.clock, publicOnly: true });
    this.ids = options.ids ?? systemIds;
    this.logger = options.logger ?? silentLogger;
  }

  /** Handles one Layer 4 request. Never throws: every failure is an error object safe to send. */
  async handle(caller: EscrowCaller, method: EscrowMethod, params: EscrowParams): Promise<EscrowAnswer> {
    const answer = await this.run(caller, method, params);
    this.options.metrics?.escrowOperation(method, answer.kind === 'error' ? answer.error.code : undefined);
    return answer;
  }

  private async run(caller: EscrowCaller, method: EscrowMethod, params: EscrowParams): Promise<EscrowAnswer> {
    try {
      const command = parseEscrowCommand(method, params);
      // L4 §1: roles are bound to authenticated identities; an anonymous caller is never a party.
      if (caller.party === ANONYMOUS_IDENTITY) throw escrowError('notAuthorized', 'unauthenticated');
      const done = await this.transact(caller, command, params);
      this.afterCommit(done, command.method === ESCROW_METHOD.lock ? command.amount : 0n);
      await this.pay(done.payouts);
      if (command.method === ESCROW_METHOD.claim && command.payout) await this.unheld(done.changed);
      return done.answer;
    } catch (error) {
      if (!(error instanceof AcmpError))
        this.logger.error('escrow.operation_failed', { method, ...errorFields(error) });
      return { kind: 'error', error: toEscrowErrorObject(error) };
    }
  }

  /** The operation's transaction: a lock on the buyer's account, any other on its (verified) escrow. */
  private async transact(caller: EscrowCaller, command: EscrowCommand, params: EscrowParams): Promise<Done> {
    // An op_ref's params are compared without their envelope: a retry signs anew (L4 §3, L7 §4).
    const hash = payloadHashOf(params);
    if (command.method === ESCROW_METHOD.lock) {
      const context = { ids: this.ids, settings: this.settings, now: this.clock.now() };
      return lockInTransaction(this.store, { caller, command, hash }, context);
    }
    const verified = await verifyBeforeLock(
      { store: this.store, resolver: this.resolver, now: this.clock.now() },
      { caller, command, params },
    );
    const request = { caller, command, hash, params, verified };
    return operateInTransaction(this.store, request, { settings: this.settings, now: this.clock.now() });
  }

  /**
   * Operator resolution of a dispute (outside the party wire surface): `toPayee` (at most the disputed
   * claim) to the payee, the rest to the buyer; the escrow closes.
   * @throws AcmpError -35001 unknown, -35003 not disputed, -32602 above the claim.
   */
  async resolve(escrowId: string, toPayee: bigint, operator: string): Promise<EscrowRecord> {
    const now = this.clock.now();
    const done = await this.store.transaction(async (tx) => {
      const record = await tx.escrow(escrowId);
      if (!record) throw escrowError('notFound');
      const log = await logOf(tx, record);
      advance(log, now);
      resolveDispute(log, { toPayee, by: 'operator', actor: operator, at: now });
      return persist(tx, record, log);
    });
    this.afterCommit(done);
    await this.pay(done.payouts);
    return done.record;
  }

  /** After a claim registered its payee's payout list (L7 §6.4): routes the payee's held payouts, pays them. */
  private async unheld(claimed: EscrowRecord | undefined): Promise<void> {
    const done = await routeHeld(this.store, claimed, this.clock.now());
    for (const record of done.changed) this.announce(record);
    await this.pay(done.payouts);
  }

  /** Applies due time transitions (window ends, dispute deadlines, expiries) and pays pending payouts. */
  async tick(): Promise<void> {
    this.ticking ??= this.runTick().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  /** Ticks every `intervalMs` until {@link stop}. */
  start(intervalMs: number): void {
    this.timer ??= this.clock
      .setInterval(() => {
        this.tick().catch((error: unknown) => this.logger.warn('escrow.tick_failed', errorFields(error)));
      }, intervalMs)
      .background();
  }

  async stop(): Promise<void> {
    this.timer?.cancel();
    this.timer = undefined;
    await this.ticking;
  }

  /** An escrow as stored, with what time did since applied (read-only; not persisted). */
  async view(escrowId: string): Promise<EscrowRecord | undefined> {
    const record = await this.store.get(escrowId);
    if (!record) return undefined;
    const log = new TransitionLog(record);
    advance(log, this.clock.now());
    // The payee's route is decided when the transition is stored (with its payout list), not in a view.
    return { ...log.record, payeeRoute: record.payeeRoute };
  }

  /** The escrows of a party, newest change first. */
  list(party: EscrowParty, query: EscrowListQuery): Promise<{ records: EscrowRecord[]; total: number }> {
    return this.store.list(party, query);
  }

  watch(escrowId: string, listener: () => void): () => void {
    return this.store.watch(escrowId, listener);
  }

  /**
   * Tells `listener` of every escrow this process changed, once per committed transaction (other hosts
   * tell their own listeners): how push notifications are sent once, by the host that made the change.
   */
  onCommitted(listener: (record: EscrowRecord) => void): () => void {
    this.committed.add(listener);
    return () => this.committed.delete(listener);
  }

  /** After a transaction committed: its change is announced and the CU it moved counted. */
  private afterCommit(done: Pick<Done, 'changed' | 'payouts'>, locked = 0n): void {
    this.announce(done.changed);
    countFunds(this.options.metrics, done, locked);
  }

  private announce(record: EscrowRecord | undefined): void {
    if (!record) return;
    this.logger.info('escrow.changed', { escrow_id: record.escrowId, state: record.state, seq: record.seq });
    for (const listener of [...this.committed]) {
      try {
        listener(record);
      } catch (error) {
        this.logger.warn('escrow.listener_failed', errorFields(error));
      }
    }
  }

  private async runTick(): Promise<void> {
    const now = this.clock.now();
    for (const escrowId of await this.store.due(now, 100)) {
      try {
        const done = await this.store.transaction(async (tx) => {
          const record = await tx.escrow(escrowId);
          if (!record) return { payouts: [], changed: undefined };
          const log = await logOf(tx, record);
          advance(log, now);
          return persist(tx, record, log);
        });
        this.afterCommit(done);
        await this.pay(done.payouts);
      } catch (error) {
        // One escrow's failure must not hold up the others' deadlines.
        this.logger.warn('escrow.advance_failed', { escrow_id: escrowId, ...errorFields(error) });
      }
    }
    await this.pay(await this.store.pendingPayouts(100));
  }

  /** Runs payouts after their transition committed; a failure leaves them pending for the next tick. */
  private async pay(payouts: readonly Payout[]): Promise<void> {
    if (payouts.length === 0) return;
    this.options.beforePayout?.(payouts);
    for (const payout of payouts) {
      try {
        await this.rail.pay(payout, this.clock.now());
      } catch (error) {
        this.logger.warn('escrow.payout_failed', { payout_id: payout.payoutId, ...errorFields(error) });
      }
    }
  }
}

/** Creates an escrow agent over a store. */
export function createEscrowAgent(options: EscrowAgentOptions): EscrowAgent {
  return new EscrowAgent(options);
}

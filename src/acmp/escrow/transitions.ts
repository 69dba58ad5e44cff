import type { JsonValue } from '../../shared/json.js';
import { routeOf, type PayeeRoute, type PayoutEntry } from './payout-route.js';
import type { EscrowRecord } from './record.js';

/** Why value moves out of an escrow: the four exits of L4 §6 (release, auto-release, resolution, expiry) and reclaim. */
export const PAYOUT_KINDS = ['release', 'auto_release', 'reclaim', 'expiry', 'resolution'] as const;
export type PayoutKind = (typeof PAYOUT_KINDS)[number];

/**
 * One payout of one transition [L4 §7.1]: keyed by the transition id (`<escrow_id>:<seq>`) and recipient
 * role — never by task_id — so a payout happens exactly once however often it is retried.
 */
export interface Payout {
  readonly payoutId: string;
  readonly escrowId: string;
  readonly tenant: string;
  readonly account: string;
  readonly amount: bigint;
  readonly kind: PayoutKind;
  readonly at: number;
  /**
   * How it is paid (docs/acmp-escrow.md "Payout configuration"): to the recipient's identity account, to
   * the account its payout list names, or held (not paid) while that list names no supported rail.
   */
  readonly route: PayoutRoute;
}

/** {@link Payout.route}. */
export type PayoutRoute = 'identity' | 'configured' | 'held';

/** One entry of an escrow's audit log: what happened, who did it, when. */
export interface EscrowEvent {
  readonly escrowId: string;
  readonly seq: number;
  readonly kind: string;
  readonly actor: string;
  readonly at: number;
  readonly data: JsonValue;
}

/** The record after some transitions, with the payouts and log entries they produced. */
export interface Transitions {
  readonly record: EscrowRecord;
  readonly payouts: readonly Payout[];
  readonly events: readonly EscrowEvent[];
}

/** One transition of a record: what happened, who did it, when, what changed and who receives what. */
export interface Transition {
  readonly kind: string;
  readonly actor: string;
  readonly at: number;
  readonly patch: Partial<EscrowRecord>;
  readonly data: JsonValue;
  /** Who receives what (zero amounts are left out). */
  readonly pay?: readonly { to: 'buyer' | 'payee'; amount: bigint; kind: PayoutKind }[];
}

/**
 * Accumulates transitions of one record: each gets the next `seq`, its events and its payouts. The payee's
 * payouts follow `payeePayout`, the registered payout list of the party it names (L7 §6.4), when that
 * party is the payee paid; otherwise the payee's identity account.
 */
export class TransitionLog {
  private current: EscrowRecord;
  private readonly payoutList: Payout[] = [];
  private readonly eventList: EscrowEvent[] = [];

  constructor(
    record: EscrowRecord,
    private readonly payeePayout?: { readonly party: string; readonly payout: readonly PayoutEntry[] },
  ) {
    this.current = record;
  }

  get record(): EscrowRecord {
    return this.current;
  }

  /** Records one transition: the next `seq`, its event and its payouts. */
  step(transition: Transition): void {
    const { kind, actor, at, patch, pay = [] } = transition;
    let data = transition.data;
    const seq = this.current.seq + 1;
    this.current = { ...this.current, ...patch, seq, updatedAt: at };
    const { escrowId, tenant } = this.current;
    for (const p of pay) {
      if (p.amount <= 0n) continue;
      const { account, route } = this.destination(p.to);
      if (p.to === 'payee') data = { ...objectOf(data), payee_payout: routeData(this.current.payeeRoute) };
      this.payoutList.push({
        payoutId: `${escrowId}:${seq}:${p.to}`,
        escrowId,
        tenant,
        account,
        amount: p.amount,
        kind: p.kind,
        at,
        route,
      });
    }
    this.eventList.push({ escrowId, seq, kind, actor, at, data });
  }

  /** Where a payout to `to` goes; a payee payout records its route on the record (L7 §6.4). */
  private destination(to: 'buyer' | 'payee'): { account: string; route: PayoutRoute } {
    if (to === 'buyer') return { account: this.current.buyer, route: 'identity' };
    const payee = this.current.payee;
    if (payee === null) throw new Error('payout to an unbound payee');
    const list = this.payeePayout?.party === payee ? this.payeePayout.payout : undefined;
    const payeeRoute = routeOf(payee, list);
    this.current = { ...this.current, payeeRoute };
    if (payeeRoute.rail === null) return { account: payee, route: 'held' };
    return { account: payeeRoute.account, route: payeeRoute.source };
  }

  result(): Transitions {
    return { record: this.current, payouts: [...this.payoutList], events: [...this.eventList] };
  }
}

function routeData(route: PayeeRoute | null): JsonValue {
  if (route === null) return null;
  return route.rail === null ? { rail: null, held: route.held } : { ...route };
}

/** A transition's data as an object to extend (every transition that pays the payee carries one). */
function objectOf(data: JsonValue): { [key: string]: JsonValue } {
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? data : {};
}

import type { JsonValue } from '../../shared/json.js';
import type { EscrowRecord } from './record.js';

/** Why value moves out of an escrow: the four exits of L4 §6 (release, auto-release, resolution, expiry) and reclaim. */
export type PayoutKind = 'release' | 'auto_release' | 'reclaim' | 'expiry' | 'resolution';

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
}

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

/** Accumulates transitions of one record: each gets the next `seq`, its events and its payouts. */
export class TransitionLog {
  private current: EscrowRecord;
  private readonly payoutList: Payout[] = [];
  private readonly eventList: EscrowEvent[] = [];

  constructor(record: EscrowRecord) {
    this.current = record;
  }

  get record(): EscrowRecord {
    return this.current;
  }

  /** Records one transition: the next `seq`, its event and its payouts. */
  step(transition: Transition): void {
    const { kind, actor, at, patch, data, pay = [] } = transition;
    const seq = this.current.seq + 1;
    this.current = { ...this.current, ...patch, seq, updatedAt: at };
    const { escrowId, tenant } = this.current;
    this.eventList.push({ escrowId, seq, kind, actor, at, data });
    for (const p of pay) {
      if (p.amount <= 0n) continue;
      const account = p.to === 'buyer' ? this.current.buyer : this.current.payee;
      if (account === null) throw new Error('payout to an unbound payee');
      this.payoutList.push({
        payoutId: `${escrowId}:${seq}:${p.to}`,
        escrowId,
        tenant,
        account,
        amount: p.amount,
        kind: p.kind,
        at,
      });
    }
  }

  result(): Transitions {
    return { record: this.current, payouts: [...this.payoutList], events: [...this.eventList] };
  }
}

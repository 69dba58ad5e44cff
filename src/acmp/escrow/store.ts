import type { AcmpErrorObject } from '../wire/errors.js';
import { LocalError } from '../../shared/errors.js';
import type { JsonValue } from '../../shared/json.js';
import { formatCu } from './amounts.js';
import type { EscrowMethod } from './constants.js';
import type { PayoutEntry } from './payout-route.js';
import type { EscrowRecord } from './record.js';
import type { EscrowEvent, Payout } from './transitions.js';

/**
 * The key an `op_ref` is remembered under (docs/acmp-escrow.md "op_ref"): the caller, the method, and the
 * escrow (or `lock` for a lock, which has none yet) — so one party's op_ref never replays another's, nor
 * another method's [L4 §3 scoped further].
 */
export interface OpKey {
  readonly tenant: string;
  readonly party: string;
  readonly method: EscrowMethod;
  /** The escrow id, or `lock`. */
  readonly scope: string;
  readonly opRef: string;
}

/** The remembered first outcome of an operation, with the JCS hash of the params it was sent with. */
export interface StoredOp {
  readonly key: OpKey;
  readonly paramsHash: string;
  readonly outcome:
    | { readonly kind: 'result'; readonly result: Record<string, JsonValue> }
    | { readonly kind: 'error'; readonly error: AcmpErrorObject };
  /** The escrow a lock created (so a replay returns the same one). */
  readonly escrowId: string | null;
  readonly at: number;
}

/** Ledger totals for the conservation check: Σ balances + Σ remaining + Σ pending payouts = Σ credits. */
export interface LedgerTotals {
  readonly balances: bigint;
  readonly remaining: bigint;
  readonly pending: bigint;
  readonly credits: bigint;
}

/** An operator's deposit made at most once per (`tenant`, `ref`) (docs/acmp-escrow.md "Funding"). */
export interface CreditOnce {
  readonly tenant: string;
  readonly account: string;
  readonly amount: bigint;
  /** The operator's reference for this deposit (a payment id, a ticket): a repeat with it is a no-op. */
  readonly ref: string;
  readonly at: number;
}

/** What {@link EscrowStore.creditOnce} did: credited now, or found the same deposit already made. */
export interface CreditOutcome {
  readonly balance: bigint;
  readonly replayed: boolean;
}

/**
 * Checks that a deposit repeats the first one made under its `ref` (every store's replay rule).
 * @throws LocalError `CONFLICT` when the account or the amount differ.
 */
export function checkRepeatedDeposit(entry: CreditOnce, first: { account: string; amount: bigint }): void {
  if (first.account === entry.account && first.amount === entry.amount) return;
  throw new LocalError(
    'CONFLICT',
    `reference ${entry.ref} was already used for a deposit of ${formatCu(first.amount)} CU to ${first.account}`,
  );
}

/** A party's registered payout list (L7 §6.4) and who set it last (docs/acmp-escrow.md "Payout configuration"). */
export interface PayoutConfig {
  readonly tenant: string;
  readonly party: string;
  readonly payout: readonly PayoutEntry[];
  /** `party` (in band, with its claim) or `operator` (out of band, `escrow payout set`). */
  readonly setBy: 'party' | 'operator';
  readonly at: number;
}

/** A party of escrows (buyer or payee) within a tenant. */
export interface EscrowParty {
  readonly tenant: string;
  readonly identity: string;
}

/** Filters and paging of a party's escrows (the A2A ListTasks view), newest change first. */
export interface EscrowListQuery {
  readonly limit: number;
  readonly after?: { readonly updatedAt: number; readonly escrowId: string };
  readonly closed?: boolean;
  readonly contextId?: string;
  readonly updatedAfter?: number;
}

/**
 * One transaction of the escrow store. Every read of an escrow or account locks its row until commit
 * (PostgreSQL `SELECT … FOR UPDATE`; SQLite `BEGIN IMMEDIATE`; memory: one transaction at a time), so
 * operations on one escrow are serial across every host sharing the database.
 */
export interface EscrowTx {
  /** The balance of an account, locked; a missing account reads as 0 (and is created). */
  account(tenant: string, account: string): Promise<bigint>;
  setBalance(tenant: string, account: string, balance: bigint): Promise<void>;
  /** An escrow, locked. */
  escrow(escrowId: string): Promise<EscrowRecord | undefined>;
  insertEscrow(record: EscrowRecord): Promise<void>;
  updateEscrow(record: EscrowRecord): Promise<void>;
  op(key: OpKey): Promise<StoredOp | undefined>;
  putOp(op: StoredOp): Promise<void>;
  /** Records payouts as pending (the outbox the rail pays from, L4 §6: after the transition is durable). */
  addPayouts(payouts: readonly Payout[]): Promise<void>;
  addEvents(events: readonly EscrowEvent[]): Promise<void>;
  /** A party's registered payout list, or undefined when it registered none. */
  payoutConfig(tenant: string, party: string): Promise<PayoutConfig | undefined>;
  /** Registers (replaces) a party's payout list. */
  setPayoutConfig(config: PayoutConfig): Promise<void>;
  /** The party's payouts held for want of a supported rail (route `held`), locked. */
  heldPayouts(tenant: string, party: string): Promise<Payout[]>;
  /** Routes a held payout to `account` (it becomes payable). */
  routePayout(payoutId: string, account: string, route: Exclude<Payout['route'], 'held'>): Promise<void>;
}

/** The escrow agent's storage port (memory, SQLite, PostgreSQL). Amounts are nano-CU. */
export interface EscrowStore {
  /** Runs `work` in one transaction; rolls back if it throws. */
  transaction<T>(work: (tx: EscrowTx) => Promise<T>): Promise<T>;
  get(escrowId: string): Promise<EscrowRecord | undefined>;
  /** Escrows in which `party` is the buyer or the bound payee. */
  list(party: EscrowParty, query: EscrowListQuery): Promise<{ records: EscrowRecord[]; total: number }>;
  /** Escrows whose next time transition is due at `now` (expiry, window end, dispute deadline). */
  due(now: number, limit: number): Promise<string[]>;
  /** Payouts not yet paid and not held (held ones wait for a supported rail, {@link EscrowTx.routePayout}). */
  pendingPayouts(limit: number): Promise<Payout[]>;
  /**
   * The credit-ledger rail: credits the payout's account and marks it paid, atomically and at most once
   * per payout id [L4 §7.1]. Returns false when it was already paid (or is held).
   */
  applyPayout(payoutId: string, at: number): Promise<boolean>;
  /** Operator funding (not on the party wire): adds to an account's balance and its credit total. */
  credit(tenant: string, account: string, amount: bigint): Promise<bigint>;
  /**
   * {@link credit} at most once per (`tenant`, `ref`), in one transaction: a repeat for the same account
   * and amount changes nothing and is `replayed`, so an operator may retry a deposit whose outcome was lost.
   * @throws LocalError `CONFLICT` when `ref` was used for another account or amount (nothing changes).
   */
  creditOnce(entry: CreditOnce): Promise<CreditOutcome>;
  balance(tenant: string, account: string): Promise<bigint>;
  totals(): Promise<LedgerTotals>;
  /** Σ remaining of every escrow: the value held in escrow now (for the metrics). */
  held(): Promise<bigint>;
  events(escrowId: string): Promise<EscrowEvent[]>;
  /**
   * Tells `listener` when the escrow changed: after each committed transaction that wrote it, in this
   * process, and on PostgreSQL on every host (a NOTIFY issued inside that transaction).
   */
  watch(escrowId: string, listener: () => void): () => void;
  open?(): Promise<void>;
  close?(): Promise<void>;
}

import { KeyedWatchers } from '../../shared/keyed-watchers.js';
import { nextDueOf, remainingOf, type EscrowRecord } from '../../acmp/escrow/record.js';
import {
  checkRepeatedDeposit,
  type CreditOnce,
  type CreditOutcome,
  type EscrowListQuery,
  type EscrowParty,
  type EscrowStore,
  type EscrowTx,
  type LedgerTotals,
  type OpKey,
  type PayoutConfig,
  type StoredOp,
} from '../../acmp/escrow/store.js';
import type { EscrowEvent, Payout } from '../../acmp/escrow/transitions.js';

interface Account {
  balance: bigint;
  credited: bigint;
}

interface PayoutRow {
  payout: Payout;
  paidAt: number | null;
}

const opId = (k: OpKey): string => JSON.stringify([k.tenant, k.party, k.method, k.scope, k.opRef]);
const accountId = (tenant: string, account: string): string => JSON.stringify([tenant, account]);
const depositId = (tenant: string, ref: string): string => JSON.stringify([tenant, ref]);

/**
 * {@link EscrowStore} in memory (tests, a host without a database). Transactions run one at a time and
 * buffer their writes, applied on commit only — so a failed operation changes nothing.
 */
export class MemoryEscrowStore implements EscrowStore {
  private readonly accounts = new Map<string, Account>();
  private readonly escrows = new Map<string, EscrowRecord>();
  private readonly ops = new Map<string, StoredOp>();
  private readonly payouts = new Map<string, PayoutRow>();
  private readonly eventLog = new Map<string, EscrowEvent[]>();
  /** The deposits made under a reference, by tenant and reference. */
  private readonly deposits = new Map<string, { account: string; amount: bigint }>();
  /** Registered payout lists, by tenant and party. */
  private readonly payoutConfigs = new Map<string, PayoutConfig>();
  private readonly watchers = new KeyedWatchers();
  private queue: Promise<unknown> = Promise.resolve();

  transaction<T>(work: (tx: EscrowTx) => Promise<T>): Promise<T> {
    const run = this.queue.then(() => this.run(work));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async run<T>(work: (tx: EscrowTx) => Promise<T>): Promise<T> {
    const balances = new Map<string, bigint>();
    const escrows = new Map<string, EscrowRecord>();
    const ops = new Map<string, StoredOp>();
    const payouts: Payout[] = [];
    const events: EscrowEvent[] = [];
    const configs = new Map<string, PayoutConfig>();
    const routed = new Map<string, Pick<Payout, 'account' | 'route'>>();
    const tx: EscrowTx = {
      account: (tenant, account) =>
        Promise.resolve(
          balances.get(accountId(tenant, account)) ??
            this.accounts.get(accountId(tenant, account))?.balance ??
            0n,
        ),
      setBalance: (tenant, account, balance) =>
        Promise.resolve(void balances.set(accountId(tenant, account), balance)),
      escrow: (id) => Promise.resolve(escrows.get(id) ?? this.escrows.get(id)),
      insertEscrow: (record) => Promise.resolve(void escrows.set(record.escrowId, record)),
      updateEscrow: (record) => Promise.resolve(void escrows.set(record.escrowId, record)),
      op: (key) => Promise.resolve(ops.get(opId(key)) ?? this.ops.get(opId(key))),
      putOp: (op) => Promise.resolve(void ops.set(opId(op.key), op)),
      addPayouts: (list) => Promise.resolve(void payouts.push(...list)),
      addEvents: (list) => Promise.resolve(void events.push(...list)),
      payoutConfig: (tenant, party) => {
        const id = accountId(tenant, party);
        return Promise.resolve(configs.get(id) ?? this.payoutConfigs.get(id));
      },
      setPayoutConfig: (config) =>
        Promise.resolve(void configs.set(accountId(config.tenant, config.party), config)),
      heldPayouts: (tenant, party) =>
        Promise.resolve(
          [...this.payouts.values()]
            .map((row) => row.payout)
            .filter((p) => p.tenant === tenant && p.account === party && p.route === 'held')
            .filter((p) => !routed.has(p.payoutId)),
        ),
      routePayout: (payoutId, account, route) =>
        Promise.resolve(void routed.set(payoutId, { account, route })),
    };
    const result = await work(tx);
    for (const [id, balance] of balances) {
      const account = this.accounts.get(id) ?? { balance: 0n, credited: 0n };
      this.accounts.set(id, { ...account, balance });
    }
    for (const [id, record] of escrows) this.escrows.set(id, record);
    for (const [id, op] of ops) this.ops.set(id, op);
    for (const payout of payouts)
      if (!this.payouts.has(payout.payoutId)) this.payouts.set(payout.payoutId, { payout, paidAt: null });
    for (const [id, config] of configs) this.payoutConfigs.set(id, config);
    for (const [id, change] of routed) {
      const row = this.payouts.get(id);
      if (row && row.paidAt === null && row.payout.route === 'held')
        row.payout = { ...row.payout, ...change };
    }
    for (const event of events)
      this.eventLog.set(event.escrowId, [...(this.eventLog.get(event.escrowId) ?? []), event]);
    for (const id of escrows.keys()) this.signal(id);
    return result;
  }

  get(escrowId: string): Promise<EscrowRecord | undefined> {
    return Promise.resolve(this.escrows.get(escrowId));
  }

  list(party: EscrowParty, query: EscrowListQuery): Promise<{ records: EscrowRecord[]; total: number }> {
    const mine = [...this.escrows.values()]
      .filter((r) => r.tenant === party.tenant && (r.buyer === party.identity || r.payee === party.identity))
      .filter((r) => query.closed === undefined || (r.state === 'closed') === query.closed)
      .filter((r) => query.contextId === undefined || r.contextId === query.contextId)
      .filter((r) => query.updatedAfter === undefined || r.updatedAt > query.updatedAfter)
      .sort((a, b) => b.updatedAt - a.updatedAt || (a.escrowId < b.escrowId ? 1 : -1));
    const after = query.after;
    const page = after
      ? mine.filter(
          (r) =>
            r.updatedAt < after.updatedAt || (r.updatedAt === after.updatedAt && r.escrowId < after.escrowId),
        )
      : mine;
    return Promise.resolve({ records: page.slice(0, query.limit), total: mine.length });
  }

  due(now: number, limit: number): Promise<string[]> {
    const due = [...this.escrows.values()].filter((r) => {
      const at = nextDueOf(r);
      return at !== null && at <= now;
    });
    return Promise.resolve(due.slice(0, limit).map((r) => r.escrowId));
  }

  pendingPayouts(limit: number): Promise<Payout[]> {
    return Promise.resolve(
      [...this.payouts.values()]
        .filter((p) => p.paidAt === null && p.payout.route !== 'held')
        .slice(0, limit)
        .map((p) => p.payout),
    );
  }

  applyPayout(payoutId: string, at: number): Promise<boolean> {
    return this.transaction(() => {
      const row = this.payouts.get(payoutId);
      if (!row || row.paidAt !== null || row.payout.route === 'held') return Promise.resolve(false);
      row.paidAt = at;
      const id = accountId(row.payout.tenant, row.payout.account);
      const account = this.accounts.get(id) ?? { balance: 0n, credited: 0n };
      this.accounts.set(id, { ...account, balance: account.balance + row.payout.amount });
      return Promise.resolve(true);
    });
  }

  credit(tenant: string, account: string, amount: bigint): Promise<bigint> {
    return this.transaction(() => Promise.resolve(this.deposit(tenant, account, amount)));
  }

  creditOnce(entry: CreditOnce): Promise<CreditOutcome> {
    return this.transaction(() => {
      const ref = depositId(entry.tenant, entry.ref);
      const first = this.deposits.get(ref);
      if (first) checkRepeatedDeposit(entry, first);
      else this.deposits.set(ref, { account: entry.account, amount: entry.amount });
      return Promise.resolve(
        first
          ? {
              balance: this.accounts.get(accountId(entry.tenant, entry.account))?.balance ?? 0n,
              replayed: true,
            }
          : { balance: this.deposit(entry.tenant, entry.account, entry.amount), replayed: false },
      );
    });
  }

  /** Adds a deposit to an account's balance and credit total; returns the balance. */
  private deposit(tenant: string, account: string, amount: bigint): bigint {
    const id = accountId(tenant, account);
    const current = this.accounts.get(id) ?? { balance: 0n, credited: 0n };
    const next = { balance: current.balance + amount, credited: current.credited + amount };
    this.accounts.set(id, next);
    return next.balance;
  }

  balance(tenant: string, account: string): Promise<bigint> {
    return Promise.resolve(this.accounts.get(accountId(tenant, account))?.balance ?? 0n);
  }

  totals(): Promise<LedgerTotals> {
    const sum = (values: Iterable<bigint>): bigint => [...values].reduce((a, b) => a + b, 0n);
    const accounts = [...this.accounts.values()];
    return Promise.resolve({
      balances: sum(accounts.map((a) => a.balance)),
      credits: sum(accounts.map((a) => a.credited)),
      remaining: sum([...this.escrows.values()].map(remainingOf)),
      pending: sum([...this.payouts.values()].filter((p) => p.paidAt === null).map((p) => p.payout.amount)),
    });
  }

  held(): Promise<bigint> {
    return Promise.resolve([...this.escrows.values()].map(remainingOf).reduce((a, b) => a + b, 0n));
  }

  events(escrowId: string): Promise<EscrowEvent[]> {
    return Promise.resolve([...(this.eventLog.get(escrowId) ?? [])]);
  }

  watch(escrowId: string, listener: () => void): () => void {
    return this.watchers.watch(escrowId, listener);
  }

  private signal(escrowId: string): void {
    this.watchers.emit(escrowId, undefined);
  }
}

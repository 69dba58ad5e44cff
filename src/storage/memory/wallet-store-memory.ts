import type { Usage, UsageScopes } from '../../wallet/check.js';
import { RATE_WINDOW_MS } from '../../wallet/check.js';
import type {
  Admission,
  Admitted,
  AuditEntry,
  AuditQuery,
  Completion,
  Intent,
  SpendRecord,
  UsageQuery,
  WalletStore,
} from '../../wallet/store.js';

/**
 * {@link WalletStore} in memory (one process; each method runs to completion without awaiting, so an
 * admission is atomic). For tests and a wallet that need not outlive its process.
 */
export class MemoryWalletStore implements WalletStore {
  private readonly spends = new Map<string, SpendRecord>();
  private readonly entries: AuditEntry[] = [];
  private readonly intents = new Map<string, Intent>();

  admit(admission: Admission): Promise<Admitted> {
    const { rejoin, query } = admission;
    const earlier =
      rejoin &&
      [...this.spends.values()].find(
        (s) =>
          s.walletId === query.walletId &&
          s.kind === 'invoke' &&
          s.counterparty === rejoin.counterparty &&
          s.taskId === rejoin.taskId &&
          s.state !== 'void',
      );
    if (earlier)
      return Promise.resolve({
        breaches: [],
        rejoined: { spendId: earlier.spendId, amount: earlier.amount },
      });
    const breaches = admission.decide(this.usageNow(query));
    if (breaches.length > 0) {
      this.entries.push(admission.denied(breaches));
      return Promise.resolve({ breaches });
    }
    if (admission.spend) this.spends.set(admission.spend.spendId, admission.spend);
    if (admission.intent) this.intents.set(intentKey(admission.intent), admission.intent);
    return Promise.resolve({ breaches: [] });
  }

  finish(c: Completion): Promise<boolean> {
    if (c.opRef !== undefined) {
      const key = `${c.walletId}\u0000${c.opRef}`;
      const intent = this.intents.get(key);
      if (!intent || intent.state !== 'pending') return Promise.resolve(false);
      this.intents.set(key, { ...intent, state: c.intentState ?? 'done' });
    }
    if (c.spend) {
      const spend = this.spends.get(c.spend.spendId);
      if (spend)
        this.spends.set(spend.spendId, {
          ...spend,
          state: c.spend.state,
          ...(c.spend.amount === undefined ? {} : { amount: c.spend.amount }),
          ...(c.spend.escrowId === undefined ? {} : { escrowId: c.spend.escrowId }),
        });
    }
    if (c.refund) {
      const refund = c.refund;
      const lock = [...this.spends.values()].find(
        (s) => s.walletId === c.walletId && s.kind === 'lock' && s.escrowId === refund.escrowId,
      );
      this.spends.set(refund.spendId, {
        spendId: refund.spendId,
        walletId: c.walletId,
        kind: 'refund',
        counterparty: lock?.counterparty ?? '',
        taskId: null,
        escrowId: refund.escrowId,
        opRef: null,
        amount: -refund.amount,
        atMs: refund.atMs,
        countedMs: lock?.countedMs ?? refund.atMs,
        state: 'settled',
      });
    }
    this.entries.push(...c.audit);
    return Promise.resolve(true);
  }

  append(entry: AuditEntry): Promise<void> {
    this.entries.push(entry);
    return Promise.resolve();
  }

  pending(walletId: string): Promise<Intent[]> {
    return Promise.resolve(
      [...this.intents.values()]
        .filter((i) => i.walletId === walletId && i.state === 'pending')
        .sort((a, b) => a.createdMs - b.createdMs),
    );
  }

  audit(walletId: string, q: AuditQuery): Promise<AuditEntry[]> {
    return Promise.resolve(
      this.entries
        .filter(
          (e) =>
            e.walletId === walletId &&
            (q.kind === undefined || e.kind === q.kind) &&
            (q.counterparty === undefined || e.counterparty === q.counterparty) &&
            (q.sinceMs === undefined || e.tsMs >= q.sinceMs),
        )
        .slice(0, q.limit),
    );
  }

  usage(query: UsageQuery): Promise<UsageScopes> {
    return Promise.resolve(this.usageNow(query));
  }

  heldEscrows(walletId: string): Promise<{ escrowId: string; agent: string; amount: bigint }[]> {
    const mine = [...this.spends.values()].filter((s) => s.walletId === walletId && s.state !== 'void');
    const held: { escrowId: string; agent: string; amount: bigint }[] = [];
    for (const lock of mine.filter((s) => s.kind === 'lock' && s.state === 'settled' && s.escrowId)) {
      const net = mine.filter((s) => s.escrowId === lock.escrowId).reduce((sum, s) => sum + s.amount, 0n);
      const intent = [...this.intents.values()].find((i) => i.spendId === lock.spendId);
      if (net > 0n && lock.escrowId)
        held.push({ escrowId: lock.escrowId, agent: intent?.agent ?? '', amount: net });
    }
    return Promise.resolve(held);
  }

  private usageNow(q: UsageQuery): UsageScopes {
    const live = [...this.spends.values()].filter((s) => s.walletId === q.walletId && s.state !== 'void');
    const scope = (spends: SpendRecord[], start: number): Usage => ({
      period: sum(spends.filter((s) => s.countedMs >= start)),
      hour: sum(spends.filter((s) => s.amount > 0n && s.atMs >= q.nowMs - RATE_WINDOW_MS)),
      task: q.taskId === null ? 0n : sum(spends.filter((s) => s.amount > 0n && s.taskId === q.taskId)),
    });
    return {
      wallet: scope(live, q.periodStart),
      counterparty: scope(
        live.filter((s) => s.counterparty === q.counterparty),
        q.counterpartyPeriodStart,
      ),
    };
  }
}

function intentKey(intent: Intent): string {
  return `${intent.walletId}\u0000${intent.opRef}`;
}

function sum(spends: SpendRecord[]): bigint {
  return spends.reduce((total, s) => total + s.amount, 0n);
}

import { formatCu, roundCu } from '../acmp/escrow/amounts.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { LocalError } from '../shared/errors.js';
import { systemIds, type IdSource } from '../shared/ids.js';
import type { JsonValue } from '../shared/json.js';
import { auditAmount, auditKindOf, describeBreach } from './audit.js';
import { checkSpend, periodStart, type Breach, type SpendEffect } from './check.js';
import { freezeConfig, type LimitSet, type WalletConfig } from './limits.js';
import type { AuditEntry, AuditQuery, Intent, UsageQuery, WalletStore } from './store.js';

/** What the wallet is asked to let through (Layer 7 §6.2 `authorize(spend)`). */
export interface SpendRequest {
  /** CU; a price that is not a whole nano-CU counts rounded up. */
  readonly amount_cu: number;
  /** The payee (DID or alias) or, for a lock not yet bound, the escrow agent. */
  readonly counterparty: string;
  readonly task_id?: string;
  /**
   * `lock` and `invoke` (direct settlement) count towards every limit; `accept`, `release` and an invoke
   * under an escrow (`escrow_id`) are checked against `per_task_max_cu` only: their money was counted
   * when it was locked (docs/acmp-wallet.md "What counts").
   */
  readonly kind: 'lock' | 'invoke' | 'accept' | 'release';
  readonly tier?: string;
  readonly escrow_id?: string;
  readonly op_ref?: string;
}

/** An authorized spend: the reservation {@link Wallet.settle} closes (none for check-only kinds). */
export interface SpendTicket {
  readonly spendId: string | undefined;
  readonly amount: bigint;
  readonly request: SpendRequest;
  /** The invoke re-sent a task id the wallet already counted: its spend is the earlier one. */
  readonly rejoined?: boolean;
}

/** A denied spend: a local error, raised before anything is sent (Layer 7 §6.2). */
export class SpendDeniedError extends LocalError {
  override readonly name: string = 'SpendDeniedError';
  constructor(readonly breaches: readonly Breach[]) {
    super('SPEND_DENIED', `spend denied by the wallet: ${breaches.map(describeBreach).join('; ')}`);
  }
}

/** One mutating Layer 4 operation to record before it is sent (Layer 7 §6.5). */
export interface OperationStart {
  readonly method: string;
  readonly agent: string;
  readonly params: Record<string, JsonValue> & { op_ref: string };
  readonly counterparty: string | null;
  readonly taskId: string | null;
  /** The spend the operation makes (a lock), authorized in the same transaction as the intent. */
  readonly spend?: SpendRequest;
}

/**
 * The buyer's wallet (Layer 7 §1, §6): operator limits it alone holds (private, frozen, no setter, no
 * method to raise them), spend authorization, the audit log and write-ahead intents, over a shared store.
 */
export class Wallet {
  readonly #config: WalletConfig;
  readonly #store: WalletStore;
  readonly #clock: Clock;
  readonly #ids: IdSource;

  constructor(config: WalletConfig, store: WalletStore, options: { clock?: Clock; ids?: IdSource } = {}) {
    this.#config = freezeConfig(config);
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#ids = options.ids ?? systemIds;
    Object.freeze(this);
  }

  /** The wallet's id (shared by every process on its store). */
  get id(): string {
    return this.#config.walletId;
  }

  /** The operator's configuration, read-only (frozen). */
  get config(): WalletConfig {
    return this.#config;
  }

  /**
   * Checks every configured limit (AND) and reserves the spend, atomically across processes.
   * @throws SpendDeniedError (`SPEND_DENIED`) when any limit would be exceeded; the denial is logged.
   */
  async authorize(request: SpendRequest): Promise<SpendTicket> {
    return (await this.#admit(request, undefined)).ticket;
  }

  /**
   * Closes a reservation and logs it: the actual cost (at most the reserved amount) when it succeeded,
   * void when it certainly did not happen, kept whole when the outcome is unknown.
   */
  async settle(
    ticket: SpendTicket,
    outcome: { ok: true; costCu: number } | { ok: false; definite: boolean; outcome: string },
  ): Promise<void> {
    const { request } = ticket;
    const cost = outcome.ok ? min(roundCu(outcome.costCu, 'up'), ticket.amount) : undefined;
    // An unknown outcome (the task may have run) keeps the whole reservation counted; it is still logged.
    // So is a re-sent task's refusal: the first send may have run (a reused task id is refused -32602),
    // so only a result may close the earlier spend — a wallet never counts less than may have been spent.
    const keep = !outcome.ok && (!outcome.definite || ticket.rejoined === true);
    await this.#store.finish({
      walletId: this.id,
      ...(ticket.spendId === undefined || keep
        ? {}
        : {
            spend: {
              spendId: ticket.spendId,
              state: outcome.ok ? 'settled' : 'void',
              ...(cost === undefined ? {} : { amount: cost }),
            },
          }),
      audit: [
        this.#entry({
          kind: request.kind === 'invoke' ? 'invoke' : request.kind,
          amount: cost ?? ticket.amount,
          tier: request.tier ?? null,
          counterparty: request.counterparty,
          escrowId: request.escrow_id ?? null,
          taskId: request.task_id ?? null,
          opRef: request.op_ref ?? null,
          outcome: outcome.ok ? 'ok' : outcome.outcome,
          detail: null,
        }),
      ],
    });
  }

  /**
   * Write-ahead: durably records the operation (and authorizes its spend) before it is sent.
   * @throws SpendDeniedError when its spend is denied (nothing is recorded but the denial).
   */
  async begin(op: OperationStart): Promise<Intent> {
    const intent: Intent = {
      walletId: this.id,
      opRef: op.params.op_ref,
      method: op.method,
      agent: op.agent,
      escrowId: typeof op.params.escrow_id === 'string' ? op.params.escrow_id : null,
      params: op.params,
      spendId: null,
      counterparty: op.counterparty,
      taskId: op.taskId,
      state: 'pending',
      createdMs: this.#clock.now(),
    };
    if (!op.spend) {
      await this.#admit(undefined, intent);
      return intent;
    }
    return (await this.#admit(op.spend, intent)).intent ?? intent;
  }

  /**
   * Records an operation's answer: closes the intent, settles or voids its spend, appends its audit entry
   * (once, whichever process finishes it). A reclaim's `reclaimed_cu` is refunded to the cap.
   */
  async finish(
    intent: Intent,
    answer: { ok: true; result: Record<string, JsonValue> } | { ok: false; outcome: string },
    how: 'answered' | 'recovered' = 'answered',
  ): Promise<boolean> {
    const result = answer.ok ? answer.result : {};
    const escrowId = stringOf(result.escrow_id) ?? intent.escrowId;
    const amount = auditAmount(intent, result);
    const refund =
      answer.ok && intent.method === 'acmp/escrowReclaim' && escrowId && amount !== null && amount > 0n
        ? { spendId: this.#ids.newId('spend'), escrowId, amount, atMs: this.#clock.now() }
        : undefined;
    return this.#store.finish({
      walletId: this.id,
      opRef: intent.opRef,
      intentState: answer.ok ? 'done' : 'failed',
      ...(intent.spendId === null
        ? {}
        : {
            spend: {
              spendId: intent.spendId,
              state: answer.ok ? 'settled' : 'void',
              ...(escrowId ? { escrowId } : {}),
            },
          }),
      ...(refund ? { refund } : {}),
      audit: [
        this.#entry({
          kind: auditKindOf(intent.method),
          amount,
          tier: stringOf(intent.params.tier),
          counterparty: intent.counterparty,
          escrowId,
          taskId: intent.taskId,
          opRef: intent.opRef,
          outcome: answer.ok ? (how === 'recovered' ? 'ok:recovered' : 'ok') : answer.outcome,
          detail: null,
        }),
      ],
    });
  }

  /** Operations recorded and not yet answered (to replay after a crash, Layer 7 §6.5). */
  pending(): Promise<Intent[]> {
    return this.#store.pending(this.id);
  }

  /** The audit log, oldest first (Layer 7 §6.3). */
  log(query: Partial<AuditQuery> = {}): Promise<AuditEntry[]> {
    return this.#store.audit(this.id, { limit: 1_000, ...query });
  }

  /** Spent and remaining headroom per limit, now (for the wallet scope and each configured counterparty). */
  async headroom(): Promise<Record<string, JsonValue>> {
    const scopes: [string, LimitSet][] = [['wallet', this.#config.limits], ...this.#config.counterparties];
    const report: Record<string, JsonValue> = {};
    for (const [name, set] of scopes) {
      const usage = await this.#store.usage(this.#query(name === 'wallet' ? '' : name, null));
      const used = name === 'wallet' ? usage.wallet : usage.counterparty;
      const line = (limit: bigint | undefined, spent: bigint): Record<string, JsonValue> => ({
        spent_cu: formatCu(spent),
        ...(limit === undefined
          ? {}
          : { limit_cu: formatCu(limit), remaining_cu: formatCu(max0(limit - spent)) }),
      });
      report[name] = {
        total_cap_cu: { period: set.capPeriod, ...line(set.totalCap, used.period) },
        rate_cu_per_hour: line(set.ratePerHour, used.hour),
        ...(set.perTaskMax === undefined ? {} : { per_task_max_cu: formatCu(set.perTaskMax) }),
      };
    }
    return report;
  }

  /** Escrows this wallet funded that are not known to be refunded, per agent. */
  held(): Promise<{ escrowId: string; agent: string; amount: bigint }[]> {
    return this.#store.heldEscrows(this.id);
  }

  async #admit(
    request: SpendRequest | undefined,
    intent: Intent | undefined,
  ): Promise<{ ticket: SpendTicket; intent: Intent | undefined }> {
    const now = this.#clock.now();
    const amount = request ? roundCu(request.amount_cu, 'up') : 0n;
    if (amount < 0n) throw new LocalError('INVALID_STATE', 'a spend amount cannot be negative');
    const effect: SpendEffect =
      request && (request.kind === 'lock' || (request.kind === 'invoke' && !request.escrow_id))
        ? 'count'
        : 'check';
    const counterparty = request?.counterparty ?? intent?.counterparty ?? '';
    const spendId = request && effect === 'count' ? this.#ids.newId('spend') : undefined;
    const withSpend = intent && spendId ? { ...intent, spendId } : intent;
    const cpLimits = this.#config.counterparties.get(counterparty);
    const taskId = request?.kind === 'invoke' && effect === 'count' ? request.task_id : undefined;
    const { breaches, rejoined } = await this.#store.admit({
      query: this.#query(counterparty, request?.task_id ?? null),
      decide: (usage) =>
        request
          ? checkSpend({ wallet: this.#config.limits, counterparty: cpLimits }, { amount, effect }, usage)
          : [],
      ...(request && spendId
        ? {
            spend: {
              spendId,
              walletId: this.id,
              kind: request.kind === 'lock' ? 'lock' : 'invoke',
              counterparty,
              taskId: request.task_id ?? null,
              escrowId: request.escrow_id ?? null,
              opRef: request.op_ref ?? intent?.opRef ?? null,
              amount,
              atMs: now,
              countedMs: now,
              state: 'reserved',
            },
          }
        : {}),
      ...(withSpend ? { intent: withSpend } : {}),
      ...(taskId ? { rejoin: { counterparty, taskId } } : {}),
      denied: (found) => this.#denial({ request, intent, amount }, found),
    });
    if (breaches.length > 0) throw new SpendDeniedError(breaches);
    if (rejoined && request)
      return {
        ticket: { spendId: rejoined.spendId, amount: rejoined.amount, request, rejoined: true },
        intent: withSpend,
      };
    return {
      ticket: { spendId, amount, request: request ?? { amount_cu: 0, counterparty, kind: 'lock' } },
      intent: withSpend,
    };
  }

  #query(counterparty: string, taskId: string | null): UsageQuery {
    const now = this.#clock.now();
    const cp = this.#config.counterparties.get(counterparty);
    return {
      walletId: this.id,
      nowMs: now,
      counterparty,
      taskId,
      periodStart: periodStart(this.#config.limits.capPeriod, now),
      counterpartyPeriodStart: periodStart(cp?.capPeriod ?? 'lifetime', now),
    };
  }

  #denial(
    attempt: { request: SpendRequest | undefined; intent: Intent | undefined; amount: bigint },
    breaches: Breach[],
  ): AuditEntry {
    const { request, intent, amount } = attempt;
    return this.#entry({
      kind: 'denied',
      amount,
      tier: request?.tier ?? null,
      counterparty: request?.counterparty ?? null,
      escrowId: request?.escrow_id ?? intent?.escrowId ?? null,
      taskId: request?.task_id ?? null,
      opRef: intent?.opRef ?? request?.op_ref ?? null,
      outcome: `denied:${[...new Set(breaches.map((b) => b.limit))].join(',')}`,
      detail: {
        attempted: request?.kind ?? intent?.method ?? null,
        breaches: breaches.map((b) => ({
          limit: b.limit,
          scope: b.scope,
          limit_cu: formatCu(b.limitNano),
          used_cu: formatCu(b.usedNano),
          requested_cu: formatCu(b.requestedNano),
        })),
      },
    });
  }

  #entry(fields: Omit<AuditEntry, 'walletId' | 'tsMs'>): AuditEntry {
    return { walletId: this.id, tsMs: this.#clock.now(), ...fields };
  }
}

function stringOf(value: JsonValue | undefined): string | null {
  return typeof value === 'string' ? value : null;
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function max0(a: bigint): bigint {
  return a < 0n ? 0n : a;
}

import type { CapPeriod, LimitSet } from './limits.js';

/*
 * The spend check of Layer 7 §6.2 as a pure function: every configured limit must pass (AND), exactly in
 * nano-CU. The store computes the usage and applies the verdict in one transaction (store.ts).
 */

/** The limits of Layer 7 §6.2. */
export type LimitName = 'total_cap_cu' | 'rate_cu_per_hour' | 'per_task_max_cu';

/** What a spend does to the limits: `count`s towards them, or is only `check`ed against the per-task one. */
export type SpendEffect = 'count' | 'check';

/** What is already spent, in one scope (the wallet, or one counterparty), in nano-CU. */
export interface Usage {
  /** Net spend since the start of the cap's period (refunds subtracted). */
  readonly period: bigint;
  /** Gross spend in the last hour (refunds do not give rate back). */
  readonly hour: bigint;
  /** Gross spend for this task. */
  readonly task: bigint;
}

/** Usage of the wallet and of the spend's counterparty. */
export interface UsageScopes {
  readonly wallet: Usage;
  readonly counterparty: Usage;
}

/** One limit a spend would exceed. */
export interface Breach {
  readonly limit: LimitName;
  readonly scope: 'wallet' | 'counterparty';
  readonly limitNano: bigint;
  /** Already used in the limit's window. */
  readonly usedNano: bigint;
  readonly requestedNano: bigint;
}

/** The rolling window of `rate_cu_per_hour`: spends at most this old count (`[now − 1 h, now]`). */
export const RATE_WINDOW_MS = 3_600_000;

/** Where a cap's period starts at `nowMs` (UTC calendar day or month; 0 for the lifetime). */
export function periodStart(period: CapPeriod, nowMs: number): number {
  const d = new Date(nowMs);
  switch (period) {
    case 'lifetime':
      return 0;
    case 'day':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    case 'month':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
}

/** Every limit of `wallet` and `counterparty` that `amount` would exceed; empty when all pass. */
export function checkSpend(
  sets: { wallet: LimitSet; counterparty: LimitSet | undefined },
  spend: { amount: bigint; effect: SpendEffect },
  usage: UsageScopes,
): Breach[] {
  return [
    ...breachesOf([sets.wallet, 'wallet'], spend, usage.wallet),
    ...(sets.counterparty ? breachesOf([sets.counterparty, 'counterparty'], spend, usage.counterparty) : []),
  ];
}

function breachesOf(
  [set, scope]: [LimitSet, Breach['scope']],
  spend: { amount: bigint; effect: SpendEffect },
  usage: Usage,
): Breach[] {
  const counted = spend.effect === 'count';
  const checks: [LimitName, bigint | undefined, bigint][] = counted
    ? [
        ['total_cap_cu', set.totalCap, usage.period],
        ['rate_cu_per_hour', set.ratePerHour, usage.hour],
        ['per_task_max_cu', set.perTaskMax, usage.task],
      ]
    : [['per_task_max_cu', set.perTaskMax, 0n]];
  return checks.flatMap(([limit, limitNano, used]) =>
    limitNano !== undefined && used + spend.amount > limitNano
      ? [{ limit, scope, limitNano, usedNano: used, requestedNano: spend.amount }]
      : [],
  );
}

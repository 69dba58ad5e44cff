import { describe, expect, it } from 'vitest';
import { checkSpend, periodStart, type Usage } from './check.js';
import type { LimitSet } from './limits.js';

const none: Usage = { period: 0n, hour: 0n, task: 0n };
const set = (limits: Partial<LimitSet>): LimitSet => ({ capPeriod: 'lifetime', ...limits });
const limitsBreached = (
  limits: Partial<LimitSet>,
  amount: bigint,
  used: Partial<Usage> = {},
  effect: 'count' | 'check' = 'count',
) =>
  checkSpend(
    { wallet: set(limits), counterparty: undefined },
    { amount, effect },
    { wallet: { ...none, ...used }, counterparty: none },
  ).map((b) => b.limit);

describe('the spend check (Layer 7 §6.2: every configured limit, AND, exact in nano-CU)', () => {
  it.each([
    ['total_cap_cu', { totalCap: 1_000n }, { period: 400n }],
    ['rate_cu_per_hour', { ratePerHour: 1_000n }, { hour: 400n }],
    ['per_task_max_cu', { perTaskMax: 1_000n }, { task: 400n }],
  ] as const)('%s alone: used + amount = limit passes, one nano-CU more is refused', (name, limits, used) => {
    expect(limitsBreached(limits, 600n, used)).toEqual([]);
    expect(limitsBreached(limits, 601n, used)).toEqual([name]);
  });

  it('combined: each limit is checked in its own window and all breaches are reported', () => {
    const all = { totalCap: 10_000n, ratePerHour: 1_000n, perTaskMax: 500n };
    expect(limitsBreached(all, 500n, { period: 9_000n, hour: 500n })).toEqual([]);
    expect(limitsBreached(all, 501n, { period: 9_000n, hour: 500n })).toEqual([
      'rate_cu_per_hour',
      'per_task_max_cu',
    ]);
    expect(limitsBreached(all, 400n, { period: 9_700n })).toEqual(['total_cap_cu']);
  });

  it('no limit configured lets any amount through; a zero limit refuses any amount', () => {
    expect(limitsBreached({}, 2n ** 53n)).toEqual([]);
    expect(limitsBreached({ totalCap: 0n }, 1n)).toEqual(['total_cap_cu']);
    expect(limitsBreached({ totalCap: 0n }, 0n)).toEqual([]);
  });

  it('a check-only spend is held against the per-task maximum alone, whatever is used', () => {
    const all = { totalCap: 100n, ratePerHour: 100n, perTaskMax: 500n };
    expect(limitsBreached(all, 500n, { period: 100n, hour: 100n, task: 500n }, 'check')).toEqual([]);
    expect(limitsBreached(all, 501n, {}, 'check')).toEqual(['per_task_max_cu']);
  });

  it('a counterparty’s limits apply in addition to the wallet’s', () => {
    const breaches = checkSpend(
      { wallet: set({ totalCap: 1_000n }), counterparty: set({ totalCap: 100n }) },
      { amount: 50n, effect: 'count' },
      { wallet: none, counterparty: { ...none, period: 60n } },
    );
    expect(breaches).toEqual([
      { limit: 'total_cap_cu', scope: 'counterparty', limitNano: 100n, usedNano: 60n, requestedNano: 50n },
    ]);
  });

  it('cap periods start at the UTC day or month, or never for the lifetime', () => {
    const t = Date.UTC(2026, 6, 15, 13, 45);
    expect(periodStart('lifetime', t)).toBe(0);
    expect(periodStart('day', t)).toBe(Date.UTC(2026, 6, 15));
    expect(periodStart('month', t)).toBe(Date.UTC(2026, 6, 1));
  });
});

import { expect, it } from 'vitest';
import { parseWalletConfig, type WalletConfig } from '../../src/wallet/limits.js';
import { SpendDeniedError, Wallet, type SpendRequest } from '../../src/wallet/wallet.js';
import type { WalletStore } from '../../src/wallet/store.js';
import type { StoreUnderTest } from './store-harness.js';

/** A wallet configuration from the file's JSON form, with overrides of its `limits`. */
export function walletConfig(
  limits: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): WalletConfig {
  return parseWalletConfig({ wallet_id: 'w1', limits, ...extra }, 'test');
}

/** A clock the test moves. */
function testClock(start = Date.UTC(2026, 6, 1, 12)): { now(): number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

const lock = (amount: number, extra: Partial<SpendRequest> = {}): SpendRequest => ({
  amount_cu: amount,
  counterparty: 'agent:p',
  kind: 'lock',
  ...extra,
});

const lockIntent = (opRef: string, amount: number) => ({
  method: 'acmp/escrowLock',
  agent: 'https://escrow.example',
  params: { op_ref: opRef, amount_cu: amount, valid_until_ms: 1 },
  counterparty: 'agent:p',
  taskId: null,
  spend: lock(amount, { op_ref: opRef }),
});

/**
 * The wallet over one store backend (docs/acmp-wallet.md): limits counted exactly, denials logged,
 * intents closed once, refunds counted, and no overshoot at the cap when instances on their own
 * connections (other processes) spend at once.
 */
export function walletContract(t: StoreUnderTest<WalletStore>): void {
  const wallet = (config = walletConfig({ total_cap_cu: 1 }), store = t.store, clock = testClock()) =>
    new Wallet(config, store, { clock });

  it('lets spends through up to the total cap exactly and denies the next nano-CU (L7 §6.2)', async () => {
    const w = wallet(walletConfig({ total_cap_cu: 0.3 }));
    await w.authorize(lock(0.1));
    await w.authorize(lock(0.2));
    await expect(w.authorize(lock(0.000000001))).rejects.toMatchObject({
      code: 'SPEND_DENIED',
      breaches: [{ limit: 'total_cap_cu', usedNano: 300_000_000n, limitNano: 300_000_000n }],
    });
  });

  it('logs a denial in the audit log with the limit that refused it', async () => {
    const w = wallet(walletConfig({ per_task_max_cu: 0.05 }));
    await expect(w.authorize(lock(0.06, { task_id: 'task_1' }))).rejects.toBeInstanceOf(SpendDeniedError);
    const [entry] = await w.log();
    expect(entry).toMatchObject({
      kind: 'denied',
      amount: 60_000_000n,
      taskId: 'task_1',
      counterparty: 'agent:p',
      outcome: 'denied:per_task_max_cu',
    });
  });

  it('counts the rolling hour: a spend an hour and 1 ms old no longer counts', async () => {
    const clock = testClock();
    const w = wallet(walletConfig({ rate_cu_per_hour: 1 }), t.store, clock);
    await w.authorize(lock(1));
    clock.advance(3_600_000);
    await expect(w.authorize(lock(0.5))).rejects.toMatchObject({ breaches: [{ limit: 'rate_cu_per_hour' }] });
    clock.advance(1);
    await expect(w.authorize(lock(1))).resolves.toMatchObject({ amount: 1_000_000_000n });
  });

  it('checks every limit (AND), each in its own scope, per counterparty too', async () => {
    const w = wallet(
      walletConfig(
        { total_cap_cu: 10, per_task_max_cu: 2 },
        { counterparties: { 'agent:p': { total_cap_cu: 1 } } },
      ),
    );
    await w.authorize(lock(1));
    await expect(w.authorize(lock(0.5))).rejects.toMatchObject({
      breaches: [{ limit: 'total_cap_cu', scope: 'counterparty' }],
    });
    await expect(w.authorize(lock(0.5, { counterparty: 'agent:q' }))).resolves.toBeDefined();
    await expect(w.authorize(lock(3, { counterparty: 'agent:q' }))).rejects.toMatchObject({
      breaches: [{ limit: 'per_task_max_cu', scope: 'wallet' }],
    });
  });

  it('a voided spend stops counting; a settled invoke counts its actual cost', async () => {
    const w = wallet(walletConfig({ total_cap_cu: 1 }));
    const a = await w.authorize({ amount_cu: 1, counterparty: 'agent:p', kind: 'invoke', task_id: 't1' });
    await w.settle(a, { ok: false, definite: true, outcome: 'refused:-33001' });
    const b = await w.authorize({ amount_cu: 1, counterparty: 'agent:p', kind: 'invoke', task_id: 't2' });
    await w.settle(b, { ok: true, costCu: 0.25 });
    await expect(w.authorize(lock(0.75))).resolves.toBeDefined();
    await expect(w.authorize(lock(0.000000001))).rejects.toBeInstanceOf(SpendDeniedError);
    expect((await w.log({ kind: 'invoke' })).map((e) => [e.amount, e.outcome])).toEqual([
      [1_000_000_000n, 'refused:-33001'],
      [250_000_000n, 'ok'],
    ]);
  });

  it('an invoke whose outcome is unknown stays counted in full, and is logged as unknown', async () => {
    const w = wallet(walletConfig({ total_cap_cu: 1 }));
    const a = await w.authorize({ amount_cu: 0.6, counterparty: 'agent:p', kind: 'invoke', task_id: 't1' });
    await w.settle(a, { ok: false, definite: false, outcome: 'unknown' });
    await expect(w.authorize(lock(0.4))).resolves.toBeDefined();
    await expect(w.authorize(lock(0.000000001))).rejects.toBeInstanceOf(SpendDeniedError);
    expect(await w.log({ kind: 'invoke' })).toMatchObject([{ amount: 600_000_000n, outcome: 'unknown' }]);
  });

  it('counts a re-sent task id once: the re-send re-joins the earlier spend, a result settles it', async () => {
    const w = wallet(walletConfig({ total_cap_cu: 1, per_task_max_cu: 0.6 }));
    const invoke = { amount_cu: 0.6, counterparty: 'agent:p', kind: 'invoke', task_id: 't1' } as const;
    const first = await w.authorize(invoke);
    await w.settle(first, { ok: false, definite: false, outcome: 'unknown' });
    // A resumed runner sends the same task id again: no second reservation, the per-task cap still holds.
    const again = await w.authorize(invoke);
    expect(again).toMatchObject({ spendId: first.spendId, amount: 600_000_000n, rejoined: true });
    await w.settle(again, { ok: true, costCu: 0.25 });
    await expect(w.authorize(lock(0.5))).resolves.toBeDefined();
    await expect(w.authorize(lock(0.25))).resolves.toBeDefined();
    await expect(w.authorize(lock(0.000000001))).rejects.toBeInstanceOf(SpendDeniedError);
  });

  it('keeps a re-joined spend counted when the re-send is refused: the first send may have run', async () => {
    const w = wallet(walletConfig({ total_cap_cu: 1 }));
    const invoke = { amount_cu: 0.6, counterparty: 'agent:p', kind: 'invoke', task_id: 't1' } as const;
    const first = await w.authorize(invoke);
    await w.settle(first, { ok: false, definite: false, outcome: 'unknown' });
    const again = await w.authorize(invoke);
    await w.settle(again, { ok: false, definite: true, outcome: 'refused:-32602' });
    await expect(w.authorize(lock(0.4))).resolves.toBeDefined();
    await expect(w.authorize(lock(0.000000001))).rejects.toBeInstanceOf(SpendDeniedError);
  });

  it('re-joins only a live invoke spend of the same counterparty and task id', async () => {
    const w = wallet(walletConfig({ total_cap_cu: 10 }));
    const invoke = { amount_cu: 1, counterparty: 'agent:p', kind: 'invoke', task_id: 't1' } as const;
    const voided = await w.authorize(invoke);
    await w.settle(voided, { ok: false, definite: true, outcome: 'refused:-33001' });
    const fresh = await w.authorize(invoke);
    expect(fresh.rejoined).toBeUndefined();
    expect(fresh.spendId).not.toBe(voided.spendId);
    for (const other of [{ task_id: 't2' }, { counterparty: 'agent:q' }]) {
      const ticket = await w.authorize({ ...invoke, ...other });
      expect(ticket.rejoined).toBeUndefined();
    }
    await expect(w.authorize(lock(7))).resolves.toBeDefined();
    await expect(w.authorize(lock(0.000000001))).rejects.toBeInstanceOf(SpendDeniedError);
  });

  it('records an intent before the send and closes it once, whoever finishes it (L7 §6.5)', async () => {
    const w = wallet();
    const intent = await w.begin(lockIntent('op_1', 0.5));
    expect((await w.pending()).map((i) => i.opRef)).toEqual(['op_1']);
    const answer = { ok: true as const, result: { escrow_id: 'esc_1', state: 'open' } };
    expect(await w.finish(intent, answer)).toBe(true);
    expect(await w.finish(intent, answer, 'recovered')).toBe(false);
    expect(await w.pending()).toEqual([]);
    const locks = await w.log({ kind: 'lock' });
    expect(locks).toHaveLength(1);
    expect(locks[0]).toMatchObject({ escrowId: 'esc_1', opRef: 'op_1', amount: 500_000_000n, outcome: 'ok' });
    expect(await w.held()).toEqual([
      { escrowId: 'esc_1', agent: 'https://escrow.example', amount: 500_000_000n },
    ]);
  });

  it('gives a reclaim back to the cap, not to the hourly rate', async () => {
    const w = wallet(walletConfig({ total_cap_cu: 1, rate_cu_per_hour: 1 }));
    await w.finish(await w.begin(lockIntent('op_l', 1)), { ok: true, result: { escrow_id: 'esc_1' } });
    const reclaim = await w.begin({
      method: 'acmp/escrowReclaim',
      agent: 'https://escrow.example',
      params: { op_ref: 'op_r', escrow_id: 'esc_1' },
      counterparty: 'agent:p',
      taskId: null,
    });
    await w.finish(reclaim, { ok: true, result: { escrow_id: 'esc_1', reclaimed_cu: 0.4 } });
    const headroom = (await w.headroom()).wallet as Record<string, Record<string, unknown>>;
    expect(headroom.total_cap_cu).toMatchObject({ spent_cu: 0.6, remaining_cu: 0.4 });
    expect(headroom.rate_cu_per_hour).toMatchObject({ spent_cu: 1, remaining_cu: 0 });
    expect(await w.held()).toEqual([
      { escrowId: 'esc_1', agent: 'https://escrow.example', amount: 600_000_000n },
    ]);
  });

  it('filters the log by kind, counterparty and time', async () => {
    const clock = testClock();
    const w = wallet(walletConfig({ per_task_max_cu: 1 }), t.store, clock);
    await w.authorize(lock(2, { counterparty: 'agent:a' })).catch(() => undefined);
    clock.advance(10);
    await w.authorize(lock(2, { counterparty: 'agent:b' })).catch(() => undefined);
    expect((await w.log({ counterparty: 'agent:b' })).map((e) => e.counterparty)).toEqual(['agent:b']);
    expect(await w.log({ sinceMs: clock.now() })).toHaveLength(1);
    expect(await w.log({ kind: 'lock' })).toEqual([]);
  });

  // SQLite's busy wait blocks the thread, so two connections in one process would wait on each other:
  // its instances in other processes are test/wallet/wallet-processes.test.ts.
  it('never overshoots the cap when 20 spends race from two instances (PostgreSQL: two pools)', async () => {
    const config = walletConfig({ total_cap_cu: 1 });
    const other = t.reopen && t.backend === 'postgres' ? await t.reopen() : t.store;
    const wallets = [wallet(config), wallet(config, other)];
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => wallets[i % 2]!.authorize(lock(0.1))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    const refused = results.flatMap((r): unknown[] => (r.status === 'rejected' ? [r.reason] : []));
    expect(refused.every((reason) => reason instanceof SpendDeniedError)).toBe(true);
    expect(await wallets[1]!.log({ kind: 'denied' })).toHaveLength(10);
  });
}

import { expect, it } from 'vitest';
import type { EscrowStore } from '../../src/acmp/escrow/store.js';
import { BUYER, escrowHarnessOf, nano, STRANGER } from './escrow-harness.js';
import type { StoreUnderTest } from './store-harness.js';

/**
 * The operator's deposits under a reference (docs/acmp-escrow.md "Funding"): `creditOnce` credits at most
 * once per (tenant, ref), so a deposit whose outcome was lost can be sent again. Part of the escrow
 * store contract (./escrow-contract.ts), on memory, SQLite and PostgreSQL.
 */
export function escrowDepositCases(t: StoreUnderTest<EscrowStore>): void {
  const harness = escrowHarnessOf(t);
  const deposit = { tenant: '', account: BUYER.party, amount: nano('2'), ref: 'bank-0001', at: 1 };

  it('D1: a deposit repeated under its ref credits once and says it was replayed, also after a restart', async () => {
    const h = await harness();
    expect(await h.store.creditOnce(deposit)).toEqual({ balance: nano('2'), replayed: false });
    expect(await h.store.creditOnce({ ...deposit, at: 2 })).toEqual({ balance: nano('2'), replayed: true });
    if (h.reopen) {
      const again = await h.reopen();
      expect(await again.creditOnce(deposit)).toEqual({ balance: nano('2'), replayed: true });
    }
    expect(await h.balance(BUYER)).toBe(nano('2'));
    expect((await h.store.totals()).credits).toBe(nano('2'));
    await h.expectConserved();
  });

  it('D2: a ref used again for another amount or account is CONFLICT and changes nothing', async () => {
    const h = await harness();
    await h.store.creditOnce(deposit);
    for (const other of [{ amount: nano('3') }, { account: STRANGER.party }])
      await expect(h.store.creditOnce({ ...deposit, ...other })).rejects.toMatchObject({
        code: 'CONFLICT',
        message: expect.stringContaining('bank-0001') as unknown,
      });
    expect(await h.balance(BUYER)).toBe(nano('2'));
    expect(await h.balance(STRANGER)).toBe(0n);
    expect((await h.store.totals()).credits).toBe(nano('2'));
    await h.expectConserved();
  });

  it('D3: of 20 concurrent deposits under one ref exactly one credits; refs are per tenant', async () => {
    const h = await harness();
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => h.store.creditOnce(deposit)));
    expect(outcomes.filter((o) => !o.replayed)).toHaveLength(1);
    expect(outcomes.every((o) => o.balance === nano('2'))).toBe(true);
    expect(await h.store.creditOnce({ ...deposit, tenant: 'tenant-b' })).toMatchObject({ replayed: false });
    expect(await h.store.balance('tenant-b', BUYER.party)).toBe(nano('2'));
    expect((await h.store.totals()).credits).toBe(nano('4'));
    await h.expectConserved();
  });
}

import { expect, it } from 'vitest';
import { ESCROW_METHOD } from '../../src/acmp/escrow/constants.js';
import { registerPayout } from '../../src/acmp/escrow/payout-config.js';
import type { EscrowStore, PayoutConfig } from '../../src/acmp/escrow/store.js';
import { BUYER, EscrowHarness, escrowHarnessOf, nano, PAYEE, STRANGER } from './escrow-harness.js';
import type { StoreUnderTest } from './store-harness.js';

const M = ESCROW_METHOD;

/** The operator's registration (`escrow payout set`), then the agent's tick that pays what it routed. */
async function setPayout(h: EscrowHarness, config: PayoutConfig): Promise<void> {
  await registerPayout(h.store, config);
  await h.agent.tick();
}
const LEDGER = [{ rail: 'credit-ledger', account: 'acct_payee_savings' }];
const SAVINGS = { tenant: '', party: 'acct_payee_savings' };
const X402_ONLY = [{ rail: 'x402', network: 'base', asset: 'USDC', address: '0x9a1f' }];

/**
 * The payee's payout configuration (Layer 7 §6.4, Layer 4 §7.1; docs/acmp-escrow.md "Payout
 * configuration"): registered in band with a claim or out of band by the operator, consulted when the
 * payee is paid, held while it names no rail the agent supports. Part of the escrow store contract
 * (./escrow-contract.ts), on memory, SQLite and PostgreSQL; each case ends with the conservation check.
 */
export function escrowPayoutCases(t: StoreUnderTest<EscrowStore>): void {
  const harness = escrowHarnessOf(t);

  /** A bound escrow of 0.004 CU with a 1 s window, and the payee's claim of `amountCu` with `extra`. */
  async function claimed(h: EscrowHarness, extra: Record<string, unknown> = {}, amountCu = 0.003) {
    const id = await h.lock(0.004, { bind: true, window: 1_000 });
    await h.ok(PAYEE, M.claim, {
      op_ref: h.opRef(),
      escrow_id: id,
      amount_cu: amountCu,
      task_id: 'task_1',
      proof: {},
      ...extra,
    });
    return id;
  }

  it('P1: a claim carrying a credit-ledger payout is paid into that account, not the identity account, also after a restart', async () => {
    const h = await harness();
    const id = await claimed(h, { payout: LEDGER });
    const store = h.reopen ? await h.reopen() : h.store;
    const again = new EscrowHarness(store, h.clock);
    h.clock.advance(2_000);
    await again.agent.tick();
    expect(await again.balance(SAVINGS)).toBe(nano('0.003'));
    expect(await again.balance(PAYEE)).toBe(0n);
    expect(await again.status(id, PAYEE)).toMatchObject({
      released_cu: 0.003,
      payee_payout: { rail: 'credit-ledger', account: 'acct_payee_savings', source: 'configured' },
    });
    // L4 §7.1: the buyer sees the rail, never the payee's account.
    const seen = await again.status(id, BUYER);
    expect(seen.payee_payout).toEqual({ rail: 'credit-ledger', source: 'configured' });
    // The escrow's log records the list the claim registered, and the route its payout took.
    const claimEvent = (await store.events(id)).find((e) => e.kind === 'claim');
    expect(claimEvent?.data).toMatchObject({ payout: LEDGER });
    const released = (await store.events(id)).find((e) => e.kind === 'auto_release');
    expect(released?.data).toMatchObject({ payee_payout: { account: 'acct_payee_savings' } });
    await again.expectConserved();
  });

  it('P2: without a payout configuration the payee is paid on its identity account, as before', async () => {
    const h = await harness();
    const id = await h.lock(0.004, { bind: true });
    await h.ok(BUYER, M.release, { op_ref: 'r1', escrow_id: id, amount_cu: 0.002, payee_id: PAYEE.party });
    expect(await h.balance(PAYEE)).toBe(nano('0.002'));
    expect(await h.status(id, PAYEE)).toMatchObject({
      payee_payout: { rail: 'credit-ledger', account: PAYEE.party, source: 'identity' },
    });
    await h.expectConserved();
  });

  it('P3: a buyer release follows the registered list; a reclaim still pays the buyer identity', async () => {
    const h = await harness();
    await setPayout(h, { tenant: '', party: PAYEE.party, payout: LEDGER, setBy: 'operator', at: 1 });
    const id = await h.lock(0.004, { bind: true });
    await h.ok(BUYER, M.release, { op_ref: 'r1', escrow_id: id, amount_cu: 0.001, payee_id: PAYEE.party });
    await h.ok(BUYER, M.reclaim, { op_ref: 'k1', escrow_id: id });
    expect(await h.balance(SAVINGS)).toBe(nano('0.001'));
    expect(await h.balance(PAYEE)).toBe(0n);
    expect(await h.balance(BUYER)).toBe(nano('0.999'));
    await h.expectConserved();
  });

  it('P3b: a release that binds an unbound escrow pays by the list of the payee it names', async () => {
    const h = await harness();
    await setPayout(h, { tenant: '', party: PAYEE.party, payout: LEDGER, setBy: 'operator', at: 1 });
    const id = await h.lock(0.004);
    await h.ok(BUYER, M.release, { op_ref: 'r1', escrow_id: id, amount_cu: 0.002, payee_id: PAYEE.party });
    expect(await h.balance(SAVINGS)).toBe(nano('0.002'));
    expect(await h.balance(PAYEE)).toBe(0n);
    await h.expectConserved();
  });

  it('P4: a list with no supported rail holds the payout (no_supported_rail) until a supported one is registered, then pays it once', async () => {
    const h = await harness();
    const id = await claimed(h, { payout: X402_ONLY });
    h.clock.advance(2_000);
    await h.agent.tick();
    await h.agent.tick();
    expect(await h.status(id, PAYEE)).toMatchObject({
      released_cu: 0.003,
      payee_payout: { rail: null, held: 'no_supported_rail' },
    });
    expect(await h.balance(PAYEE)).toBe(0n);
    const totals = await h.store.totals();
    expect(totals.pending).toBe(nano('0.003'));
    expect(totals.balances + totals.remaining + totals.pending).toBe(totals.credits);
    await setPayout(h, {
      tenant: '',
      party: PAYEE.party,
      payout: [...X402_ONLY, ...LEDGER],
      setBy: 'operator',
      at: 2,
    });
    await setPayout(h, { tenant: '', party: PAYEE.party, payout: LEDGER, setBy: 'operator', at: 3 });
    expect(await h.balance(SAVINGS)).toBe(nano('0.003'));
    expect(await h.status(id, PAYEE)).toMatchObject({
      payee_payout: { rail: 'credit-ledger', account: 'acct_payee_savings', source: 'configured' },
    });
    expect((await h.store.events(id)).filter((e) => e.kind === 'payout_routed')).toHaveLength(1);
    await h.expectConserved();
  });

  it('P5: only the payee changes its payout list: a claim from another party, or one refused, registers nothing', async () => {
    const h = await harness();
    const id = await h.lock(0.004, { bind: true, window: 1_000, agreed: 0.003 });
    const params = { escrow_id: id, amount_cu: 0.002, task_id: 't', proof: {}, payout: LEDGER };
    expect(await h.fails(STRANGER, M.claim, { ...params, op_ref: 's1' })).toMatchObject({ code: -35005 });
    expect(await h.fails(BUYER, M.claim, { ...params, op_ref: 'b1' })).toMatchObject({ code: -35005 });
    expect(await h.fails(PAYEE, M.claim, { ...params, op_ref: 'p0', amount_cu: 0.0035 })).toMatchObject({
      code: -35006,
    });
    const { payout: _payout, ...unrouted } = params;
    await h.ok(PAYEE, M.claim, { ...unrouted, op_ref: 'p1' });
    h.clock.advance(2_000);
    await h.agent.tick();
    expect(await h.balance(SAVINGS)).toBe(0n);
    expect(await h.balance(PAYEE)).toBe(nano('0.002'));
    // The payee's own accepted claim does register it, for this escrow and the next.
    const next = await claimed(h, { payout: LEDGER }, 0.001);
    h.clock.advance(2_000);
    await h.agent.tick();
    expect(await h.status(next, PAYEE)).toMatchObject({ payee_payout: { source: 'configured' } });
    expect(await h.balance(SAVINGS)).toBe(nano('0.001'));
    await h.expectConserved();
  });

  it('P6: a malformed payout list is -32602 payout_invalid and the claim changes nothing', async () => {
    const h = await harness();
    const id = await h.lock(0.004, { bind: true, window: 1_000 });
    const claim = { op_ref: 'c1', escrow_id: id, amount_cu: 0.001, task_id: 't', proof: {} };
    for (const payout of [[], [{ rail: 'credit-ledger' }], 'acct', [{ account: 'a' }]])
      expect(await h.fails(PAYEE, M.claim, { ...claim, payout })).toMatchObject({
        code: -32602,
        data: { reason: 'payout_invalid' },
      });
    expect(await h.status(id)).toMatchObject({ state: 'open' });
    await h.expectConserved();
  });
}

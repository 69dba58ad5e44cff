import { expect, it } from 'vitest';
import { ESCROW_METHOD } from '../../src/acmp/escrow/constants.js';
import type { EscrowStore } from '../../src/acmp/escrow/store.js';
import { escrowDepositCases } from './escrow-contract-deposits.js';
import { escrowDisputeCases } from './escrow-contract-disputes.js';
import { escrowPayoutCases } from './escrow-contract-payouts.js';
import { BUYER, EscrowHarness, escrowHarnessOf, nano, PAYEE, STRANGER } from './escrow-harness.js';
import type { StoreUnderTest } from './store-harness.js';

const M = ESCROW_METHOD;

/**
 * The escrow scenarios of the design (acmp-negotiation-escrow.md §4.9, E1–E20) that the transport-free
 * agent decides, run against one store implementation through the store harness
 * (test/helpers/store-harness.ts). Each ends with the conservation check. E1–E11 (locks, releases,
 * claims) are here, E12–E20 and the rest in ./escrow-contract-disputes.ts, the operator's deposits in
 * ./escrow-contract-deposits.ts.
 */
export function escrowContract(t: StoreUnderTest<EscrowStore>): void {
  const harness = escrowHarnessOf(t);

  it('E1: a lock above the balance is -35002, replayed for its op_ref after funding; a new op_ref succeeds', async () => {
    const h = await harness();
    await h.store.credit('', BUYER.party, nano('0.001'));
    const params = { op_ref: 'lock-1', amount_cu: 0.005, valid_until_ms: h.clock.now() + 60_000 };
    expect(await h.fails(BUYER, M.lock, params)).toMatchObject({ code: -35002 });
    expect(await h.balance(BUYER)).toBe(nano('0.001'));
    await h.store.credit('', BUYER.party, nano('1'));
    expect(await h.fails(BUYER, M.lock, params)).toMatchObject({ code: -35002 });
    expect(await h.ok(BUYER, M.lock, { ...params, op_ref: 'lock-2' })).toMatchObject({
      state: 'open',
      amount_cu: 0.005,
    });
    await h.expectConserved();
  });

  it('E2: a lock retried with its op_ref returns the same escrow and debits once, also after a restart', async () => {
    const h = await harness();
    await h.store.credit('', BUYER.party, nano('1'));
    const params = { op_ref: 'lock-a', amount_cu: 0.25, valid_until_ms: h.clock.now() + 60_000 };
    const first = await h.ok(BUYER, M.lock, params);
    expect(await h.ok(BUYER, M.lock, params)).toEqual(first);
    if (h.reopen) {
      const again = new EscrowHarness(await h.reopen(), h.clock);
      expect(await again.ok(BUYER, M.lock, params)).toEqual(first);
    }
    expect(await h.balance(BUYER)).toBe(nano('0.75'));
    await h.expectConserved();
  });

  it("E3: another party sending the buyer's lock op_ref gets its own lock, never the buyer's escrow", async () => {
    const h = await harness();
    await h.store.credit('', BUYER.party, nano('1'));
    await h.store.credit('', STRANGER.party, nano('1'));
    const params = { op_ref: 'shared', amount_cu: 0.1, valid_until_ms: h.clock.now() + 60_000 };
    const mine = await h.ok(BUYER, M.lock, params);
    const theirs = await h.ok(STRANGER, M.lock, params);
    expect(theirs.escrow_id).not.toBe(mine.escrow_id);
    expect(await h.balance(STRANGER)).toBe(nano('0.9'));
    await h.expectConserved();
  });

  it('E4: an op_ref reused with other params is -35003 op_ref_conflict and changes nothing; another method is its own operation', async () => {
    const h = await harness();
    const id = await h.lock(0.01, { bind: true });
    await h.ok(BUYER, M.release, { op_ref: 'r1', escrow_id: id, amount_cu: 0.002, payee_id: PAYEE.party });
    expect(
      await h.fails(BUYER, M.release, {
        op_ref: 'r1',
        escrow_id: id,
        amount_cu: 0.003,
        payee_id: PAYEE.party,
      }),
    ).toMatchObject({ code: -35003, data: { reason: 'op_ref_conflict' } });
    // REF probe O1: a release with a bind's op_ref got the bind's result; here each method has its own op_refs.
    await h.ok(BUYER, M.bind, { op_ref: 'same', escrow_id: await h.lock(0.01), payee_id: PAYEE.party });
    expect(
      await h.ok(BUYER, M.release, {
        op_ref: 'same',
        escrow_id: id,
        amount_cu: 0.001,
        payee_id: PAYEE.party,
      }),
    ).toMatchObject({ released_cu: 0.001 });
    expect(await h.status(id)).toMatchObject({ released_cu: 0.003, remaining_cu: 0.007 });
    await h.expectConserved();
  });

  it('E5: a release sent twice with one op_ref pays once', async () => {
    const h = await harness();
    const id = await h.lock(0.01, { bind: true });
    const params = {
      op_ref: 'pay',
      escrow_id: id,
      amount_cu: 0.004,
      payee_id: PAYEE.party,
      task_id: 'task_1',
    };
    const first = await h.ok(BUYER, M.release, params);
    expect(await h.ok(BUYER, M.release, params)).toEqual(first);
    expect(await h.balance(PAYEE)).toBe(nano('0.004'));
    await h.expectConserved();
  });

  it('E6: releases whose sum exceeds the remaining balance: the second is -35006 and the payee gets the first only', async () => {
    const h = await harness();
    const id = await h.lock(0.01, { bind: true });
    await h.ok(BUYER, M.release, { op_ref: 'a', escrow_id: id, amount_cu: 0.007, payee_id: PAYEE.party });
    expect(
      await h.fails(BUYER, M.release, {
        op_ref: 'b',
        escrow_id: id,
        amount_cu: 0.004,
        payee_id: PAYEE.party,
      }),
    ).toMatchObject({ code: -35006 });
    expect(await h.balance(PAYEE)).toBe(nano('0.007'));
    await h.expectConserved();
  });

  it('E7: 50 concurrent releases of 0.001 on a 0.01 escrow: exactly 10 succeed, 0.01 paid', async () => {
    const h = await harness();
    const id = await h.lock(0.01, { bind: true });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        h.call(BUYER, M.release, {
          op_ref: `c${i}`,
          escrow_id: id,
          amount_cu: 0.001,
          payee_id: PAYEE.party,
        }),
      ),
    );
    expect(answers.filter((a) => a.kind === 'result')).toHaveLength(10);
    expect(
      answers
        .filter((a) => a.kind === 'error')
        .every((a) => a.kind === 'error' && [-35006, -35003].includes(a.error.code)),
    ).toBe(true);
    expect(await h.balance(PAYEE)).toBe(nano('0.01'));
    expect(await h.status(id)).toMatchObject({ state: 'closed', remaining_cu: 0 });
    await h.expectConserved();
  });

  it('E8: an exact remainder releases exactly (lock 0.3, release 0.1, release 0.2 → closed, 0 left)', async () => {
    const h = await harness();
    const id = await h.lock(0.3, { bind: true });
    await h.ok(BUYER, M.release, { op_ref: 'x', escrow_id: id, amount_cu: 0.1, payee_id: PAYEE.party });
    expect(
      await h.ok(BUYER, M.release, { op_ref: 'y', escrow_id: id, amount_cu: 0.2, payee_id: PAYEE.party }),
    ).toMatchObject({ state: 'closed', remaining_cu: 0 });
    await h.expectConserved();
  });

  it('E9: a claim for a task that never ran, disputed, ends at the deadline with the default refund', async () => {
    const h = await harness();
    const id = await h.lock(0.005, { bind: true });
    expect(
      await h.ok(PAYEE, M.claim, {
        op_ref: 'c',
        escrow_id: id,
        amount_cu: 0.005,
        task_id: 'never_ran',
        proof: { method: 'result-hash', hash: 'sha256:00' },
      }),
    ).toMatchObject({ state: 'claimed' });
    expect(
      await h.ok(BUYER, M.dispute, { op_ref: 'd', escrow_id: id, reason: 'no such task' }),
    ).toMatchObject({ state: 'disputed', default_outcome: 'refund_buyer' });
    h.clock.advance(119_999);
    expect(await h.status(id)).toMatchObject({ state: 'disputed' });
    h.clock.advance(1);
    await h.agent.tick();
    expect(await h.status(id)).toMatchObject({
      state: 'closed',
      dispute: { resolution: { by: 'default', to_buyer_cu: 0.005, to_payee_cu: 0 } },
    });
    expect(await h.balance(BUYER)).toBe(nano('1'));
    expect(await h.balance(PAYEE)).toBe(0n);
    await h.expectConserved();
  });

  it('E10: a claim above the agreed price is -35006 exceeds_agreed_price', async () => {
    const h = await harness();
    const id = await h.lock(0.005, { bind: true, agreed: 0.003 });
    expect(
      await h.fails(PAYEE, M.claim, {
        op_ref: 'c',
        escrow_id: id,
        amount_cu: 0.004,
        task_id: 't',
        proof: {},
      }),
    ).toMatchObject({ code: -35006, data: { reason: 'exceeds_agreed_price' } });
    await h.ok(PAYEE, M.claim, { op_ref: 'c2', escrow_id: id, amount_cu: 0.003, task_id: 't', proof: {} });
    await h.expectConserved();
  });

  it('E11: a second claim for one task after its auto-release is -35003 duplicate_claim, and every auto-release pays (REF bug A)', async () => {
    const h = await harness();
    const id = await h.lock(0.004, { bind: true, window: 1_000 });
    await h.ok(PAYEE, M.claim, {
      op_ref: 'c1',
      escrow_id: id,
      amount_cu: 0.001,
      task_id: 'task_same',
      proof: {},
    });
    h.clock.advance(2_000);
    await h.agent.tick();
    expect(
      await h.fails(PAYEE, M.claim, {
        op_ref: 'c2',
        escrow_id: id,
        amount_cu: 0.001,
        task_id: 'task_same',
        proof: {},
      }),
    ).toMatchObject({ code: -35003, data: { reason: 'duplicate_claim' } });
    await h.ok(PAYEE, M.claim, {
      op_ref: 'c3',
      escrow_id: id,
      amount_cu: 0.001,
      task_id: 'task_other',
      proof: {},
    });
    h.clock.advance(2_000);
    await h.agent.tick();
    expect(await h.status(id)).toMatchObject({ released_cu: 0.002 });
    expect(await h.balance(PAYEE)).toBe(nano('0.002'));
    await h.expectConserved();
  });

  escrowDisputeCases(t);
  escrowDepositCases(t);
  escrowPayoutCases(t);
}

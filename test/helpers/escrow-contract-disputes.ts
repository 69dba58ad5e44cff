import { expect, it } from 'vitest';
import { ESCROW_METHOD } from '../../src/acmp/escrow/constants.js';
import type { EscrowStore } from '../../src/acmp/escrow/store.js';
import {
  BUYER,
  EscrowHarness,
  escrowHarnessOf,
  ManualClock,
  nano,
  PAYEE,
  STRANGER,
} from './escrow-harness.js';
import type { StoreUnderTest } from './store-harness.js';

const M = ESCROW_METHOD;

/** E12–E20 of the escrow contract (./escrow-contract.ts): authority, disputes, expiry, restarts, audit. */
export function escrowDisputeCases(t: StoreUnderTest<EscrowStore>): void {
  const harness = escrowHarnessOf(t);

  it('E12: a claim by a non-payee or on an unbound escrow is -35005', async () => {
    const h = await harness();
    const bound = await h.lock(0.004, { bind: true });
    const unbound = await h.lock(0.004);
    const claim = { op_ref: 'c', amount_cu: 0.001, task_id: 't', proof: {} };
    expect(await h.fails(STRANGER, M.claim, { ...claim, escrow_id: bound })).toMatchObject({
      code: -35005,
    });
    expect(await h.fails(BUYER, M.claim, { ...claim, escrow_id: bound })).toMatchObject({ code: -35005 });
    expect(await h.fails(PAYEE, M.claim, { ...claim, escrow_id: unbound })).toMatchObject({ code: -35005 });
    await h.expectConserved();
  });

  it('E13: a dispute after the window is -35003; the auto-release has paid', async () => {
    const h = await harness();
    const id = await h.lock(0.004, { bind: true, window: 1_000 });
    await h.ok(PAYEE, M.claim, { op_ref: 'c', escrow_id: id, amount_cu: 0.003, task_id: 't', proof: {} });
    h.clock.advance(1_000);
    expect(await h.fails(BUYER, M.dispute, { op_ref: 'd', escrow_id: id, reason: 'late' })).toMatchObject({
      code: -35003,
    });
    expect(await h.balance(PAYEE)).toBe(nano('0.003'));
    await h.expectConserved();
  });

  it('E14: a release below a pending claim is -35003; at the claim it resolves it', async () => {
    const h = await harness();
    const id = await h.lock(0.004, { bind: true });
    await h.ok(PAYEE, M.claim, { op_ref: 'c', escrow_id: id, amount_cu: 0.003, task_id: 't', proof: {} });
    expect(
      await h.fails(BUYER, M.release, {
        op_ref: 'r1',
        escrow_id: id,
        amount_cu: 0.002,
        payee_id: PAYEE.party,
      }),
    ).toMatchObject({ code: -35003, data: { reason: 'below_claim' } });
    expect(
      await h.ok(BUYER, M.release, {
        op_ref: 'r2',
        escrow_id: id,
        amount_cu: 0.003,
        payee_id: PAYEE.party,
      }),
    ).toMatchObject({ state: 'open', remaining_cu: 0.001 });
    expect(await h.status(id)).toMatchObject({ claim: null });
    await h.expectConserved();
  });

  it('E15: a reclaim on a bound escrow is -35003 before any settlement and succeeds after a partial release', async () => {
    const h = await harness();
    const id = await h.lock(0.005, { bind: true });
    expect(await h.fails(BUYER, M.reclaim, { op_ref: 'x', escrow_id: id })).toMatchObject({
      code: -35003,
      data: { reason: 'bound_unsettled' },
    });
    await h.ok(BUYER, M.release, { op_ref: 'r', escrow_id: id, amount_cu: 0.003, payee_id: PAYEE.party });
    expect(await h.ok(BUYER, M.reclaim, { op_ref: 'y', escrow_id: id })).toMatchObject({
      reclaimed_cu: 0.002,
      state: 'closed',
    });
    expect(await h.balance(BUYER)).toBe(nano('0.997'));
    await h.expectConserved();
  });

  it('E16: an open escrow expires to the buyer and takes no more operations (-35004); a claim filed before expiry suspends it', async () => {
    const h = await harness();
    const open = await h.lock(0.004, { bind: true, validMs: 10_000 });
    const claimed = await h.lock(0.004, { bind: true, validMs: 10_000, window: 20_000 });
    await h.ok(PAYEE, M.claim, {
      op_ref: 'c',
      escrow_id: claimed,
      amount_cu: 0.003,
      task_id: 't',
      proof: {},
    });
    h.clock.advance(10_000);
    await h.agent.tick();
    expect(await h.status(open)).toMatchObject({ state: 'closed', expired: true, reclaimed_cu: 0.004 });
    expect(
      await h.fails(BUYER, M.release, {
        op_ref: 'late',
        escrow_id: open,
        amount_cu: 0.001,
        payee_id: PAYEE.party,
      }),
    ).toMatchObject({ code: -35004 });
    expect(await h.status(claimed)).toMatchObject({ state: 'claimed' });
    h.clock.advance(10_000);
    await h.agent.tick();
    expect(await h.status(claimed)).toMatchObject({
      state: 'closed',
      released_cu: 0.003,
      reclaimed_cu: 0.001,
      expired: true,
    });
    expect(await h.balance(PAYEE)).toBe(nano('0.003'));
    await h.expectConserved();
  });

  it('E17: status of an escrow by a stranger is -35005, by an anonymous caller -35005, of an unknown escrow -35001', async () => {
    const h = await harness();
    const id = await h.lock(0.004);
    expect(await h.fails(STRANGER, M.status, { escrow_id: id })).toMatchObject({ code: -35005 });
    expect(await h.fails({ tenant: '', party: 'anonymous' }, M.status, { escrow_id: id })).toMatchObject({
      code: -35005,
      data: { reason: 'unauthenticated' },
    });
    expect(await h.fails(PAYEE, M.status, { escrow_id: id })).toMatchObject({ code: -35005 });
    expect(await h.fails(BUYER, M.status, { escrow_id: 'esc_unknown' })).toMatchObject({ code: -35001 });
  });

  it('E18: invalid amounts, times and windows are refused before anything changes', async () => {
    const h = await harness();
    await h.store.credit('', BUYER.party, nano('1'));
    const lock = (p: Record<string, unknown>) =>
      h.fails(BUYER, M.lock, {
        op_ref: h.opRef(),
        amount_cu: 0.001,
        valid_until_ms: h.clock.now() + 60_000,
        ...p,
      });
    expect(await lock({ amount_cu: 0 })).toMatchObject({
      code: -35003,
      data: { reason: 'non_positive_amount' },
    });
    expect(await lock({ amount_cu: -1 })).toMatchObject({ code: -35003 });
    expect(await lock({ amount_cu: 1e-12 })).toMatchObject({ code: -32602, data: { reason: 'precision' } });
    expect(await lock({ valid_until_ms: h.clock.now() })).toMatchObject({
      code: -32602,
      data: { reason: 'valid_until_past' },
    });
    expect(await lock({ challenge_window_ms: -5 })).toMatchObject({
      code: -32602,
      data: { reason: 'window_out_of_range' },
    });
    expect(await lock({ payee_id: 'anonymous' })).toMatchObject({
      code: -32602,
      data: { reason: 'payee_invalid' },
    });
    expect(await h.balance(BUYER)).toBe(nano('1'));
    await h.expectConserved();
  });

  it('E20: a dispute survives a restart and its deadline still applies', async () => {
    const h = await harness();
    if (!h.reopen) return;
    const id = await h.lock(0.004, { bind: true });
    await h.ok(PAYEE, M.claim, { op_ref: 'c', escrow_id: id, amount_cu: 0.004, task_id: 't', proof: {} });
    await h.ok(BUYER, M.dispute, { op_ref: 'd', escrow_id: id, reason: 'bad output' });
    const after = new EscrowHarness(await h.reopen(), new ManualClock(h.clock.now() + 60_000));
    expect(await after.status(id)).toMatchObject({ state: 'disputed' });
    after.clock.advance(60_000);
    await after.agent.tick();
    expect(await after.status(id)).toMatchObject({
      state: 'closed',
      dispute: { resolution: { by: 'default' } },
    });
    await after.expectConserved();
  });

  it('an operator resolution splits the remaining balance and closes the escrow', async () => {
    const h = await harness();
    const id = await h.lock(0.005, { bind: true });
    await h.ok(PAYEE, M.claim, { op_ref: 'c', escrow_id: id, amount_cu: 0.004, task_id: 't', proof: {} });
    await h.ok(BUYER, M.dispute, { op_ref: 'd', escrow_id: id, reason: 'partly wrong' });
    await expect(h.agent.resolve(id, nano('0.0041'), 'operator')).rejects.toMatchObject({ code: -32602 });
    await h.agent.resolve(id, nano('0.002'), 'operator');
    expect(await h.status(id)).toMatchObject({
      state: 'closed',
      released_cu: 0.002,
      reclaimed_cu: 0.003,
      dispute: { resolution: { by: 'operator' } },
    });
    expect(await h.balance(PAYEE)).toBe(nano('0.002'));
    await h.expectConserved();
  });

  it('authority: only the buyer binds, releases, reclaims and disputes; the payee cannot release to itself', async () => {
    const h = await harness();
    const id = await h.lock(0.005, { bind: true });
    for (const [method, params] of [
      [M.release, { amount_cu: 0.001, payee_id: PAYEE.party }],
      [M.reclaim, {}],
      [M.dispute, { reason: 'x' }],
      [M.bind, { payee_id: STRANGER.party }],
    ] as const) {
      expect(await h.fails(PAYEE, method, { op_ref: 'p', escrow_id: id, ...params })).toMatchObject({
        code: -35005,
      });
      expect(await h.fails(STRANGER, method, { op_ref: 'p', escrow_id: id, ...params })).toMatchObject({
        code: -35005,
      });
    }
    expect(
      await h.fails(BUYER, M.release, {
        op_ref: 'wrong',
        escrow_id: id,
        amount_cu: 0.001,
        payee_id: STRANGER.party,
      }),
    ).toMatchObject({ code: -35005, data: { reason: 'payee_mismatch' } });
    expect(
      await h.fails(BUYER, M.bind, { op_ref: 'rebind', escrow_id: id, payee_id: STRANGER.party }),
    ).toMatchObject({ code: -35003, data: { reason: 'already_bound' } });
    await h.expectConserved();
  });

  it('keys each payout by its transition, records an audit log, and stores release proofs', async () => {
    const h = await harness();
    const id = await h.lock(0.005, { bind: true });
    await h.ok(BUYER, M.release, {
      op_ref: 'r',
      escrow_id: id,
      amount_cu: 0.002,
      payee_id: PAYEE.party,
      task_id: 'task_9',
      proof: { method: 'result-hash', hash: 'sha256:ab' },
    });
    const events = await h.store.events(id);
    expect(events.map((e) => e.kind)).toEqual(['lock', 'bind', 'release']);
    expect(events[2]).toMatchObject({
      actor: BUYER.party,
      data: { task_id: 'task_9', proof: { hash: 'sha256:ab' } },
    });
    await h.expectConserved();
  });
}

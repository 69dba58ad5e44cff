import { describe, expect, it } from 'vitest';
import { ESCROW_METHOD } from '../../src/acmp/escrow/constants.js';
import type { EscrowStore } from '../../src/acmp/escrow/store.js';
import { BUYER, EscrowHarness, ManualClock, nano, PAYEE, STRANGER } from './escrow-harness.js';

/** A store under test and, for durable stores, a way to open it again as after a restart. */
export interface EscrowStoreUnderTest {
  store: EscrowStore;
  reopen?: () => Promise<EscrowStore>;
}

const M = ESCROW_METHOD;

/**
 * The escrow scenarios of the design (acmp-negotiation-escrow.md §4.9, E1–E20) that the transport-free
 * agent decides, run against one store implementation. Each ends with the conservation check.
 */
export function escrowContract(name: string, open: () => Promise<EscrowStoreUnderTest>): void {
  describe(`escrow agent scenarios on ${name} (Layer 4 §2–§7)`, () => {
    const harness = async (): Promise<EscrowHarness & { reopen?: EscrowStoreUnderTest['reopen'] }> => {
      const { store, reopen } = await open();
      return Object.assign(new EscrowHarness(store), { reopen });
    };

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
  });
}

import { afterEach, describe, expect, it } from 'vitest';
import { ESCROW_METHOD as M } from '../../src/acmp/escrow/constants.js';
import { cleanup } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { collectUntil, escrowHost } from './helpers.js';

afterEach(cleanup);

/** Two escrow agents on one PostgreSQL: row locks (SELECT … FOR UPDATE) make one escrow's operations serial. */
describe.skipIf(!process.env.TEST_PG_URL)('escrow agents on several hosts sharing PostgreSQL', () => {
  async function twoHosts() {
    const db = await freshPgDatabase();
    const a = await escrowHost({ db, migrate: true });
    const b = await escrowHost({ db });
    return { a, b };
  }

  it('E7 across hosts: 50 concurrent releases of 0.001 on a 0.01 escrow, half on each host — exactly 10 succeed, 0.01 paid once', async () => {
    const { a, b } = await twoHosts();
    await a.credit('agent:buyer', '1');
    const [onA, onB] = [await a.client('buyer'), await b.client('buyer')];
    const escrowId = (
      await onA.call(M.lock, {
        op_ref: 'l',
        amount_cu: 0.01,
        valid_until_ms: Date.now() + 3_600_000,
        payee_id: 'agent:provider',
      })
    ).escrow_id as string;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? onA : onB).call(M.release, {
          op_ref: `r${i}`,
          escrow_id: escrowId,
          amount_cu: 0.001,
          payee_id: 'agent:provider',
        }),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(10);
    for (const o of outcomes)
      if (o.status === 'rejected') expect([-35006, -35003]).toContain((o.reason as { code: number }).code);
    expect(await a.ledger.balance('', 'agent:provider')).toBe(10_000_000n);
    expect(await onB.status(escrowId)).toMatchObject({ state: 'closed', released_cu: 0.01, remaining_cu: 0 });
    const t = await a.ledger.totals();
    expect(t.balances + t.remaining + t.pending).toBe(t.credits);
  });

  it('one op_ref retried on both hosts at once executes once', async () => {
    const { a, b } = await twoHosts();
    await a.credit('agent:buyer', '1');
    const [onA, onB] = [await a.client('buyer'), await b.client('buyer')];
    const lock = { op_ref: 'same-lock', amount_cu: 0.3, valid_until_ms: Date.now() + 3_600_000 };
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? onA : onB).call(M.lock, lock)),
    );
    expect(new Set(results.map((r) => r.escrow_id)).size).toBe(1);
    expect(await a.ledger.balance('', 'agent:buyer')).toBe(700_000_000n);
  });

  it('a buyer subscribed on host B hears of a claim filed on host A', async () => {
    const { a, b } = await twoHosts();
    await a.credit('agent:buyer', '1');
    const buyerOnB = await b.client('buyer');
    const escrowId = (
      await buyerOnB.call(M.lock, {
        op_ref: 'l',
        amount_cu: 0.005,
        valid_until_ms: Date.now() + 3_600_000,
        payee_id: 'agent:provider',
      })
    ).escrow_id as string;
    const seen = collectUntil(buyerOnB.watch(escrowId), (s) => s.state === 'claimed');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await (
      await a.client('provider')
    ).call(M.claim, { op_ref: 'c', escrow_id: escrowId, amount_cu: 0.002, task_id: 'task_1', proof: {} });
    expect((await seen).at(-1)).toMatchObject({
      state: 'claimed',
      claim: { amount_cu: 0.002, task_id: 'task_1' },
    });
  });
});

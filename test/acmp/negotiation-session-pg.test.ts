import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { cleanup } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import {
  errorOf,
  getTask,
  manualClock,
  offerOf,
  onTask,
  openSession,
  rootOf,
  send,
  sessionHost,
  subscribe,
  A,
  type WireTask,
} from './session-helpers.js';

afterEach(cleanup);

describe.skipIf(!process.env.TEST_PG_URL)('session mode across hosts on one PostgreSQL', () => {
  it('racing accepts on two hosts: exactly one COMPLETED, one agreement; the others are refused or see the end', async () => {
    const db = await freshPgDatabase();
    const one = await sessionHost({ db, migrate: true, sessions: { maxOpenSessions: 50 } });
    const two = await sessionHost({ db, migrate: false, sessions: { maxOpenSessions: 50 } });
    for (let trial = 0; trial < 15; trial++) {
      const task = await openSession(one.host);
      const offer = offerOf(task);
      const hosts = [one.host, two.host, one.host, two.host];
      const replies = await Promise.all(
        hosts.map((h, i) =>
          send(h, onTask(task, 'acmp/accept', { offer_id: offer.offer_id, escrow_id: `esc_${trial}_${i}` })),
        ),
      );
      const completed = replies.filter((r) => r.result?.task?.status.state === 'TASK_STATE_COMPLETED');
      expect(completed).toHaveLength(1);
      for (const r of replies.filter((x) => !completed.includes(x))) {
        expect(r.error?.code === -32004 || [-34001, -34003].includes(errorOf(r)?.code ?? 0)).toBe(true);
      }
      const read = (await getTask(two.host, task.id)).result as WireTask;
      expect(rootOf(read)?.acmp_result).toEqual(rootOf(completed[0]!)?.acmp_result);
    }
    const rows = await one.host
      .database!.db.selectFrom('acmp_agreements')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    expect(Number((rows as { n: number | string }).n)).toBe(15);
  });

  it('a subscriber on one host hears of an expiry swept on the other (LISTEN/NOTIFY)', async () => {
    const db = await freshPgDatabase();
    const clock = manualClock();
    // Only the first host sweeps often; the subscriber's host re-reads rarely, so the signal must carry it.
    const one = await sessionHost({
      db,
      clock,
      migrate: true,
      sessions: { sweepMs: 50, fallbackReadMs: 60_000 },
    });
    const two = await sessionHost({
      db,
      clock,
      migrate: false,
      sessions: { sweepMs: 60_000, fallbackReadMs: 60_000 },
    });
    const task = await openSession(one.host, { offer_valid_ms: 1_000 });
    const stream = subscribe(two.host, task.id);
    expect(((await stream.next()).value as { task: WireTask }).task.status.state).toBe(
      'TASK_STATE_INPUT_REQUIRED',
    );
    await clock.advance(1_001);
    // The sweeps in flight read PostgreSQL: time goes on passing until the update arrives.
    const next = (await clock.passUntil(stream.next(), 50)).value as {
      statusUpdate: { status: WireTask['status'] };
    };
    expect(next.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(next.statusUpdate.status.message?.parts[0]?.data).toMatchObject({ acmp_error: { code: -34002 } });
    expect((await stream.next()).done).toBe(true);
  });

  it('a session negotiated on one host is executed on the other through referenceTaskIds', async () => {
    const db = await freshPgDatabase();
    const one = await sessionHost({ db, migrate: true });
    const two = await sessionHost({ db, migrate: false });
    const agreement = await (
      await createAcmpBuyer({ agentUrl: one.host.url, token: A })
    ).negotiate({ capability: 'count-runs', mode: 'session', counter: () => ({ price_cu: 0.0009 }) });
    const result = await (
      await createAcmpBuyer({ agentUrl: two.host.url, token: A })
    ).invoke({ agreement, input: { type: 'text', data: 'x' } });
    expect(result.cost_cu).toBe(0.0009);
    expect(one.counter.runs() + two.counter.runs()).toBe(1);
  });
});

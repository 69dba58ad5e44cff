import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer, type AcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import type { NegotiatedAgreement } from '../../src/a2a/acmp/negotiation-client.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import type { Clock } from '../../src/shared/clock.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { codeOf, countingCapability, newTaskId } from './helpers.js';

afterEach(cleanup);

const TOKENS = ['a=agent-a-secret-0123456789', 'b=agent-b-secret-0123456789'];
const A = 'agent-a-secret-0123456789';
const B = 'agent-b-secret-0123456789';

/** A clock the test moves (injected into the host: offer validity and agreement windows follow it). */
const manualClock = (start = Date.now()): ManualClock => new ManualClock(start);

const perToken: AcmpCapability = {
  id: 'per-token',
  price: (input) => 0.001 + 0.000001 * JSON.stringify(input.data).replaceAll('"', '').length,
  handler: (input) => Promise.resolve({ type: 'text', data: JSON.stringify(input.data).toUpperCase() }),
};

async function negotiatingHost(options: { clock?: Clock; db?: string; migrate?: boolean } = {}) {
  const counter = countingCapability('count-runs', 5);
  const modules = [
    acmpModule({
      capabilities: [counter, perToken],
      heartbeatIntervalMs: 500,
      negotiation: { offerValidMs: { default: 5_000, min: 50, max: 60_000 }, invokeWindowMs: 60_000 },
    }),
  ];
  const host = await startTestHost({
    flags: { token: TOKENS, ...(options.db ? { db: options.db } : {}) },
    modules,
    ...(options.clock ? { clock: options.clock } : {}),
    migrate: options.migrate ?? true,
  });
  return { host, counter };
}

const buyerFor = (url: string, token: string): Promise<AcmpBuyer> =>
  createAcmpBuyer({ agentUrl: url, token, retries: 0 });

describe('Layer 6 flat negotiation over A2A (docs/acmp-negotiation.md)', () => {
  it('advertises acmp/offerRequest and acmp/accept in the capability object', async () => {
    const { host } = await negotiatingHost();
    const buyer = await buyerFor(host.url, A);
    expect(buyer.capabilityObject.accepts).toEqual(
      expect.arrayContaining(['acmp/offerRequest', 'acmp/accept']),
    );
  });

  it('I1: an invoke under the agreement runs once and is charged the agreed price; the agreement is consumed', async () => {
    const { host, counter } = await negotiatingHost();
    const buyer = await buyerFor(host.url, A);
    const agreement = await buyer.negotiate({
      capability: 'count-runs',
      max_price_cu: 0.01,
      proof_method: 'result-hash',
    });
    expect(agreement.ack).toEqual({ offer_id: agreement.offer.offer_id, escrow_id: null, price_cu: 0.001 });
    const result = await buyer.invoke({ agreement, input: { type: 'text', data: 'go' } });
    expect(result.cost_cu).toBe(0.001);
    expect(result.proof).toMatchObject({ method: 'result-hash' });
    expect(counter.runs()).toBe(1);
    const again = await codeOf(buyer.invoke({ agreement, input: { type: 'text', data: 'go' } }));
    expect(again).toMatchObject({ code: -32602, data: { reason: 'agreement_consumed' } });
    expect(counter.runs()).toBe(1);
  });

  it('I2/I3: refuses an invoke below the agreed price (-33001) or with another proof method (-33006) before any work', async () => {
    const { host, counter } = await negotiatingHost();
    const buyer = await buyerFor(host.url, A);
    const agreement = await buyer.negotiate({ capability: 'count-runs', proof_method: 'result-hash' });
    const input = { type: 'text', data: 'x' };
    expect(
      await codeOf(
        buyer.invoke({
          capability: 'count-runs',
          input,
          offer_id: agreement.offer.offer_id,
          max_price_cu: 0.0001,
          proof_method: 'result-hash',
        }),
      ),
    ).toMatchObject({ code: -33001, data: { min_price_cu: 0.001 } });
    expect(
      await codeOf(
        buyer.invoke({
          capability: 'count-runs',
          input,
          offer_id: agreement.offer.offer_id,
          max_price_cu: 1,
        }),
      ),
    ).toMatchObject({ code: -33006, data: { reason: 'differs_from_agreement' } });
    expect(counter.runs()).toBe(0);
  });

  it('I4: concurrent invokes with different task ids on one escrow-backed agreement: exactly one runs, the others -33005 committed', async () => {
    const { host, counter } = await negotiatingHost();
    const buyer = await buyerFor(host.url, A);
    const agreement = await buyer.negotiate({ capability: 'count-runs', escrow_id: 'esc_i4' });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, () => buyer.invoke({ agreement, input: { type: 'text', data: 'x' } })),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as AcmpError] : []));
    expect(
      refused.every((e) => e.code === -33005 && (e.data as { reason: string }).reason === 'committed'),
    ).toBe(true);
    expect(counter.runs()).toBe(1);
  });

  it('I7: another buyer cannot execute the agreement (-32602 agreement_foreign) nor accept the offer (-34001)', async () => {
    const { host } = await negotiatingHost();
    const a = await buyerFor(host.url, A);
    const b = await buyerFor(host.url, B);
    const offer = await a.quote({ capability: 'count-runs' });
    expect((await codeOf(b.accept({ offer_id: offer.offer_id }))).code).toBe(-34001);
    await a.accept({ offer_id: offer.offer_id });
    const refused = await codeOf(
      b.invoke({
        capability: 'count-runs',
        input: { type: 'text', data: 'x' },
        offer_id: offer.offer_id,
        max_price_cu: 1,
      }),
    );
    expect(refused).toMatchObject({ code: -32602, data: { reason: 'agreement_foreign' } });
  });

  it('I8: without the agreement the same capability runs in direct mode at its list price', async () => {
    const { host } = await negotiatingHost();
    const buyer = await buyerFor(host.url, A);
    const agreement = await buyer.negotiate({ capability: 'per-token', input_tokens_est: 10 });
    const input = { type: 'text', data: 'abcd' };
    expect((await buyer.invoke({ agreement, input })).cost_cu).toBe(agreement.offer.price_cu);
    expect((await buyer.invoke({ capability: 'per-token', input, max_price_cu: 1 })).cost_cu).toBeCloseTo(
      0.001004,
      9,
    );
  });

  it('refuses an input larger than the quote covers (-33001 input_exceeds_quote)', async () => {
    const { host } = await negotiatingHost();
    const buyer = await buyerFor(host.url, A);
    const agreement = await buyer.negotiate({ capability: 'per-token', input_tokens_est: 2 });
    const refused = await codeOf(buyer.invoke({ agreement, input: { type: 'text', data: 'x'.repeat(400) } }));
    expect(refused).toMatchObject({ code: -33001, data: { reason: 'input_exceeds_quote' } });
  });

  it('N12: a second acceptance with another escrow is -34003; an exact retry gets the same Ack', async () => {
    const { host } = await negotiatingHost();
    const buyer = await buyerFor(host.url, A);
    const offer = await buyer.quote({ capability: 'count-runs' });
    const ack = await buyer.accept({ offer_id: offer.offer_id, escrow_id: 'esc_one' });
    expect(await buyer.accept({ offer_id: offer.offer_id, escrow_id: 'esc_one' })).toEqual(ack);
    expect((await codeOf(buyer.accept({ offer_id: offer.offer_id, escrow_id: 'esc_two' }))).code).toBe(
      -34003,
    );
  });

  it('one open agreement per escrow: accepting a second offer on the same escrow is -33005 escrow_committed', async () => {
    const { host } = await negotiatingHost();
    const buyer = await buyerFor(host.url, A);
    await buyer.negotiate({ capability: 'count-runs', escrow_id: 'esc_shared' });
    const second = await buyer.quote({ capability: 'count-runs' });
    expect(await codeOf(buyer.accept({ offer_id: second.offer_id, escrow_id: 'esc_shared' }))).toMatchObject({
      code: -33005,
      data: { reason: 'escrow_committed' },
    });
  });

  it('N6/I9: an expired offer is never accepted (-34002), and an agreement is executed only in its window', async () => {
    const clock = manualClock();
    const { host } = await negotiatingHost({ clock });
    const buyer = await buyerFor(host.url, A);
    const offer = await buyer.quote({ capability: 'count-runs', offer_valid_ms: 1_000 });
    expect(offer.valid_until_ms).toBe(clock.now() + 1_000);
    await clock.advance(1_001);
    expect((await codeOf(buyer.accept({ offer_id: offer.offer_id }))).code).toBe(-34002);
    const fresh = await buyer.quote({ capability: 'count-runs' });
    const ack = await buyer.accept({ offer_id: fresh.offer_id });
    await clock.advance(60_001);
    const late = await codeOf(
      buyer.invoke({
        agreement: { offer: fresh, ack } satisfies NegotiatedAgreement,
        input: { type: 'text', data: 'x' },
      }),
    );
    expect(late).toMatchObject({ code: -32602, data: { reason: 'agreement_expired' } });
  });

  it('N18: offer validity is clamped to the advertised range and integral; a negative validity is -32602', async () => {
    const clock = manualClock(1_000_000.75);
    const { host } = await negotiatingHost({ clock });
    const buyer = await buyerFor(host.url, A);
    expect((await buyer.quote({ capability: 'count-runs', offer_valid_ms: 0 })).valid_until_ms).toBe(
      1_000_050,
    );
    expect((await buyer.quote({ capability: 'count-runs', offer_valid_ms: 1e12 })).valid_until_ms).toBe(
      1_060_000,
    );
    expect((await codeOf(buyer.quote({ capability: 'count-runs', offer_valid_ms: -5 }))).code).toBe(-32602);
  });

  it('refuses a tampered offer id (-34001) and quote failures with their Layer 1 codes', async () => {
    const { host } = await negotiatingHost();
    const buyer = await buyerFor(host.url, A);
    const offer = await buyer.quote({ capability: 'count-runs' });
    const [body, tag] = offer.offer_id.slice('offer_'.length).split('.');
    const terms = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const cheaper = Buffer.from(JSON.stringify({ ...terms, price_cu: 0 })).toString('base64url');
    expect((await codeOf(buyer.accept({ offer_id: `offer_${cheaper}.${tag}` }))).code).toBe(-34001);
    expect((await codeOf(buyer.quote({ capability: 'nope' }))).code).toBe(-33002);
    expect((await codeOf(buyer.quote({ capability: 'count-runs', proof_method: 'tee' }))).code).toBe(-33006);
    expect(await codeOf(buyer.quote({ capability: 'count-runs', max_price_cu: 0.0001 }))).toMatchObject({
      code: -33001,
      data: { min_price_cu: 0.001 },
    });
  });

  it('N17: 2,000 flat quotes write nothing durable (SQLite: no agreement rows, no tasks)', async () => {
    const { host } = await negotiatingHost();
    const buyer = await buyerFor(host.url, A);
    for (let i = 0; i < 2_000; i += 100)
      await Promise.all(Array.from({ length: 100 }, () => buyer.quote({ capability: 'count-runs' })));
    const db = host.database!.db;
    expect(
      await db
        .selectFrom('acmp_agreements')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst(),
    ).toMatchObject({ n: 0 });
    expect(
      await db
        .selectFrom('acmp_tasks')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst(),
    ).toMatchObject({ n: 0 });
  });
});

describe.skipIf(!process.env.TEST_PG_URL)('Layer 6 across hosts on one PostgreSQL', () => {
  it('an offer quoted on one host is accepted on another; racing accepts with different escrows: exactly one wins', async () => {
    const db = await freshPgDatabase();
    const one = await negotiatingHost({ db, migrate: true });
    const two = await negotiatingHost({ db, migrate: false });
    const [b1, b2] = [await buyerFor(one.host.url, A), await buyerFor(two.host.url, A)];
    for (let trial = 0; trial < 20; trial++) {
      const offer = await b1.quote({ capability: 'count-runs' });
      const outcomes = await Promise.allSettled(
        [b1, b2, b1, b2].map((b, i) =>
          b.accept({ offer_id: offer.offer_id, escrow_id: `esc_${trial}_${i}` }),
        ),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    }
    const agreement = await b1.negotiate({ capability: 'count-runs' });
    const runs = await Promise.allSettled(
      [b1, b2, b1, b2].map((b) =>
        b.invoke({ agreement, task_id: newTaskId(), input: { type: 'text', data: 'x' } }),
      ),
    );
    expect(runs.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(one.counter.runs() + two.counter.runs()).toBe(1);
  });
});

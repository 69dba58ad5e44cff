import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer, type AcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { negotiateBest } from '../../src/a2a/acmp/fan-out.js';
import type { OfferContext } from '../../src/a2a/acmp/session-client.js';
import type { Offer } from '../../src/acmp/wire/negotiation-messages.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { isLocalError } from '../../src/shared/errors.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { codeOf, countingCapability } from './helpers.js';
import {
  A,
  B,
  call,
  errorOf,
  getTask,
  invokeOn,
  manualClock,
  send,
  sessionHeaders,
  sessionHost,
  TOKENS,
  type WireTask,
} from './session-helpers.js';

afterEach(cleanup);

const buyerFor = (url: string, token = A): Promise<AcmpBuyer> =>
  createAcmpBuyer({ agentUrl: url, token, retries: 0 });
const input = { type: 'text', data: 'x' };

describe('buyer.negotiate in session mode, then invoke under the agreement (design §4.3, §4.5)', () => {
  it('N2/I1: counters, accepts, and the invoke (referenceTaskIds + escrow, same context) is charged the revised price once; a second is -33005', async () => {
    const { host, counter } = await sessionHost();
    const buyer = await buyerFor(host.url);
    const seen: OfferContext[] = [];
    const agreement = await buyer.negotiate({
      capability: 'count-runs',
      max_price_cu: 0.01,
      escrow_id: 'esc_i1',
      counter: (offer, context) => (
        seen.push(context),
        offer.price_cu > 0.0009 ? { price_cu: 0.0009 } : 'accept'
      ),
    });
    expect(seen.map((c) => c.round)).toEqual([1, 2]);
    expect(agreement.session?.taskId).toMatch(/^neg_/);
    expect(agreement.ack).toMatchObject({ price_cu: 0.0009, escrow_id: 'esc_i1' });
    const taskId = 'task_i1_' + crypto.randomUUID().slice(0, 8);
    const result = await buyer.invoke({ agreement, input, task_id: taskId });
    expect(result.cost_cu).toBe(0.0009);
    expect(counter.runs()).toBe(1);
    const invoke = (await getTask(host, taskId)).result as WireTask & {
      history: { referenceTaskIds?: string[]; contextId?: string; parts: unknown[] }[];
    };
    expect(invoke.history[0]?.referenceTaskIds).toEqual([agreement.session?.taskId]);
    expect(invoke.contextId).toBe(agreement.session?.contextId);
    expect(await codeOf(buyer.invoke({ agreement, input }))).toMatchObject({
      code: -33005,
      data: { reason: 'committed' },
    });
    expect(counter.runs()).toBe(1);
  });

  it('I2/I3 through the reference: a ceiling below the agreed price is -33001, another proof method -33006', async () => {
    const { host, counter } = await sessionHost();
    const buyer = await buyerFor(host.url);
    const agreement = await buyer.negotiate({
      capability: 'count-runs',
      proof_method: 'result-hash',
      mode: 'session',
    });
    const session = agreement.session!.taskId;
    expect(
      errorOf(await send(host, invokeOn([session], { max_price_cu: 0.0001, proof_method: 'result-hash' }))),
    ).toMatchObject({ code: -33001, data: { min_price_cu: 0.001 } });
    expect(errorOf(await send(host, invokeOn([session])))).toMatchObject({
      code: -33006,
      data: { reason: 'differs_from_agreement' },
    });
    expect(counter.runs()).toBe(0);
  });

  it("I7: an invoke citing another buyer's negotiation is -32602 agreement_foreign", async () => {
    const { host } = await sessionHost();
    const agreement = await (
      await buyerFor(host.url)
    ).negotiate({ capability: 'count-runs', mode: 'session' });
    expect(errorOf(await send(host, invokeOn([agreement.session!.taskId]), B))).toMatchObject({
      code: -32602,
      data: { reason: 'agreement_foreign' },
    });
  });

  it('I8: an escrow-less session agreement runs through the reference alone; without it the invoke is direct, at list price', async () => {
    const { host } = await sessionHost();
    const buyer = await buyerFor(host.url);
    const agreement = await buyer.negotiate({
      capability: 'count-runs',
      mode: 'session',
      counter: () => ({ price_cu: 0.0008 }),
    });
    expect((await buyer.invoke({ agreement, input })).cost_cu).toBe(0.0008);
    expect((await buyer.invoke({ capability: 'count-runs', input, max_price_cu: 1 })).cost_cu).toBe(0.001);
  });

  it("I9: an invoke after the agreement's invoke window is -32602 agreement_expired", async () => {
    const clock = manualClock();
    const { host } = await sessionHost({ clock });
    const buyer = await buyerFor(host.url);
    const agreement = await buyer.negotiate({ capability: 'count-runs', mode: 'session' });
    await clock.advance(60_001);
    expect(await codeOf(buyer.invoke({ agreement, input }))).toMatchObject({
      code: -32602,
      data: { reason: 'agreement_expired' },
    });
  });

  it('a counter that rejects cancels the session and fails with ABORTED; a final offer is only accepted or rejected', async () => {
    const { host } = await sessionHost({ sessions: { maxRounds: 2 } });
    const buyer = await buyerFor(host.url);
    const contexts: OfferContext[] = [];
    const counter = (_offer: Offer, context: OfferContext) => (
      contexts.push(context),
      context.round === 1 ? { price_cu: 0.0001 } : ('reject' as const)
    );
    await expect(buyer.negotiate({ capability: 'count-runs', counter })).rejects.toSatisfy((e) =>
      isLocalError(e, 'ABORTED'),
    );
    expect(contexts.map((c) => [c.round, c.final])).toEqual([
      [1, false],
      [2, true],
    ]);
    const listed = await call(host, 'ListTasks', {}, sessionHeaders(A));
    expect(listed.result?.tasks?.map((t) => t.status.state)).toEqual(['TASK_STATE_CANCELED']);
  });

  it('picks the mode from the card: mode session without the extension is -33007; a counter alone falls back to flat', async () => {
    const host = await startTestHost({
      flags: { token: TOKENS },
      modules: [acmpModule({ capabilities: [countingCapability()], negotiation: true })],
    });
    const buyer = await buyerFor(host.url);
    expect((await codeOf(buyer.negotiate({ capability: 'count-runs', mode: 'session' }))).code).toBe(-33007);
    const flat = await buyer.negotiate({ capability: 'count-runs', counter: () => ({ price_cu: 0 }) });
    expect(flat.session).toBeUndefined();
    expect(flat.ack.price_cu).toBe(0.001);
  });

  it('sizes the quote from the input and keeps it: invoke({ agreement }) needs no input', async () => {
    const perToken: AcmpCapability = {
      id: 'per-token',
      price: (i) => 0.001 + 0.000001 * JSON.stringify(i.data).length,
      handler: (i) => Promise.resolve({ type: 'json', data: i.data }),
    };
    const { host } = await sessionHost({ capabilities: [perToken] });
    const buyer = await buyerFor(host.url);
    const text = { type: 'text', data: 'y'.repeat(400) };
    const agreement = await buyer.negotiate({ capability: 'per-token', input: text, mode: 'session' });
    expect(agreement.offer.price_cu).toBeCloseTo(0.001402, 9);
    expect((await buyer.invoke({ agreement })).cost_cu).toBe(agreement.offer.price_cu);
  });
});

describe('fan-out to several providers (L6 §5 quasi-auction)', () => {
  const priced = async (price: number) => {
    const capability = { ...countingCapability(), price };
    return startTestHost({
      flags: { token: TOKENS },
      modules: [acmpModule({ capabilities: [capability], negotiation: true })],
    });
  };

  it('quotes every provider, accepts the cheapest valid offer and leaves the others to expire', async () => {
    const hosts = await Promise.all([0.003, 0.001, 0.002, 0.02].map(priced));
    const buyers = await Promise.all(hosts.map((h) => buyerFor(h.url)));
    const best = await negotiateBest(
      buyers,
      { capability: 'count-runs', max_price_cu: 0.01 },
      { deadlineMs: 5_000 },
    );
    expect(best.buyer).toBe(buyers[1]);
    expect(best.agreement.ack.price_cu).toBe(0.001);
    expect(best.quotes.filter((q) => 'offer' in q)).toHaveLength(3);
    expect(best.quotes.find((q) => q.buyer === buyers[3] && 'error' in q)).toBeDefined();
    expect((await best.buyer.invoke({ agreement: best.agreement, input })).cost_cu).toBe(0.001);
    for (const host of hosts.filter((_, i) => i !== 1)) {
      const rows = await host
        .database!.db.selectFrom('acmp_agreements')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst();
      expect(Number((rows as { n: number }).n)).toBe(0);
    }
  });

  it('fails with -33001 no_acceptable_offer when nobody quotes within the budget', async () => {
    const hosts = await Promise.all([0.003, 0.004].map(priced));
    const buyers = await Promise.all(hosts.map((h) => buyerFor(h.url)));
    expect(
      await codeOf(negotiateBest(buyers, { capability: 'count-runs', max_price_cu: 0.001 })),
    ).toMatchObject({ code: -33001, data: { reason: 'no_acceptable_offer' } });
  });
});

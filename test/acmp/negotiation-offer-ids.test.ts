import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { countingCapability, newTaskId } from './helpers.js';

afterEach(cleanup);

const TOKEN = 'agent-a-secret-0123456789';

async function negotiatingHost() {
  const counter = countingCapability('count-runs', 5);
  const host = await startTestHost({
    flags: { token: [`a=${TOKEN}`] },
    modules: [acmpModule({ capabilities: [counter], negotiation: true })],
    migrate: true,
  });
  return { host, counter, buyer: await createAcmpBuyer({ agentUrl: host.url, token: TOKEN, retries: 0 }) };
}

async function codeOf(work: Promise<unknown>): Promise<number> {
  try {
    await work;
  } catch (error) {
    if (error instanceof AcmpError) return error.code;
    throw error;
  }
  return 0;
}

/** Spellings of one offer id that a lenient base64url decoder reads as the same bytes. */
function respellings(offerId: string): Record<string, string> {
  const [body, tag] = offerId.slice('offer_'.length).split('.') as [string, string];
  return {
    'padding after the body': `offer_${body}=.${tag}`,
    'a space after the body': `offer_${body} .${tag}`,
    'padding after the tag': `offer_${body}.${tag}=`,
    'a * inside the body': `offer_${body.slice(0, 5)}*${body.slice(5)}.${tag}`,
  };
}

describe('offer ids are canonical (L6 §2.2: offers are single-use)', () => {
  it('refuses every re-spelling of an accepted offer with -34001, so one offer yields one agreement', async () => {
    const { host, counter, buyer } = await negotiatingHost();
    const offer = await buyer.quote({ capability: 'count-runs' });
    await buyer.accept({ offer_id: offer.offer_id, escrow_id: 'esc_1' });
    const spellings = Object.entries(respellings(offer.offer_id));
    for (const [i, [what, spelling]] of spellings.entries()) {
      expect({
        what,
        code: await codeOf(buyer.accept({ offer_id: spelling, escrow_id: `esc_${i + 2}` })),
      }).toEqual({
        what,
        code: -34001,
      });
    }
    for (const [i, [what, spelling]] of spellings.entries()) {
      const ran = await codeOf(
        buyer.invoke({
          capability: 'count-runs',
          task_id: newTaskId(),
          input: { type: 'text', data: 'x' },
          offer_id: spelling,
          escrow_id: `esc_${i + 2}`,
          max_price_cu: 1,
        }),
      );
      expect({ what, ran }).toEqual({ what, ran: -32602 });
    }
    expect(counter.runs()).toBe(0);
    const rows = await host
      .database!.db.selectFrom('acmp_agreements')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    expect(Number(rows?.n)).toBe(1);
  });

  it('refuses a re-spelling of an offer nobody accepted yet (-34001); the canonical id is then still accepted', async () => {
    const { buyer } = await negotiatingHost();
    const offer = await buyer.quote({ capability: 'count-runs' });
    for (const spelling of Object.values(respellings(offer.offer_id)))
      expect(await codeOf(buyer.accept({ offer_id: spelling }))).toBe(-34001);
    expect(await buyer.accept({ offer_id: offer.offer_id })).toMatchObject({ offer_id: offer.offer_id });
  });
});

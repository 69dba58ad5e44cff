import { afterEach, describe, expect, it } from 'vitest';
import type { AcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createA2AAcmpBuyer, type A2AAcmpBuyer } from '../../src/connect/a2a-acmp-buyer.js';
import type { BuyerEscrow } from '../../src/a2a/escrow/buyer-escrow.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import type { Payload } from '../../src/acmp/wire/task-messages.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { escrowHost, secret } from '../escrow/helpers.js';
import { cleanup, startTestHost } from '../helpers/host.js';

afterEach(cleanup);

const INPUT: Payload = { type: 'text', data: 'Revenue grew 12% YoY.' };

/** An escrow agent, a provider negotiating in sessions that checks escrows there, and a buyer of both. */
async function threeAgents() {
  const escrow = await escrowHost();
  await escrow.credit('agent:buyer', '1');
  const provider = await startTestHost({
    modules: [
      acmpModule({
        capabilities: demoCapabilities({ stepMs: 5 }),
        heartbeatIntervalMs: 100,
        negotiation: { sessions: { sweepMs: 100 } },
        escrowAgent: {
          agentUrl: escrow.host.url,
          token: secret('provider'),
          payeeId: 'agent:provider',
          claimDelayMs: 300,
          settleEveryMs: 50,
        },
      }),
    ],
  });
  const buyer = (await createA2AAcmpBuyer({
    agentUrl: provider.url,
    escrow: { agentUrl: escrow.host.url, token: secret('buyer') },
  })) as A2AAcmpBuyer & { escrow: BuyerEscrow };
  return { escrow, buyer, balance: (who: string) => escrow.ledger.balance('', who) };
}

/** A session negotiation on `escrowId` in which the buyer counters to 0.0018 CU. */
const negotiate = (buyer: AcmpBuyer, escrowId: string) =>
  buyer.negotiate({
    capability: 'sentiment-analysis',
    max_price_cu: 0.005,
    proof_method: 'result-hash',
    escrow_id: escrowId,
    input: INPUT,
    counter: (offer) => (offer.price_cu > 0.0018 ? { price_cu: 0.0018 } : 'accept'),
  });

describe('session agreements paid through an escrow (design §4.5 I5, I6; F1 with a session)', () => {
  it('F1: lock → session with a counter → accept → bind at the agreed price → invoke → release → reclaim', async () => {
    const { buyer, balance } = await threeAgents();
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000);
    const agreement = await negotiate(buyer, escrowId);
    expect(agreement.session).toBeDefined();
    expect(agreement.ack).toMatchObject({ escrow_id: escrowId, price_cu: 0.0018 });
    await buyer.escrow.bind(escrowId, 'agent:provider', { agreedPriceCu: agreement.ack.price_cu });
    const result = await buyer.invoke({ agreement });
    expect(result.cost_cu).toBe(0.0018);
    await buyer.escrow.releaseFor(
      escrowId,
      { payeeId: 'agent:provider', result },
      {
        output: result.output!,
        input: INPUT,
        proofMethod: 'result-hash',
      },
    );
    expect(await buyer.escrow.reclaim(escrowId)).toMatchObject({ state: 'closed' });
    expect(await balance('agent:provider')).toBe(1_800_000n);
    expect(await balance('agent:buyer')).toBe(1_000_000_000n - 1_800_000n);
  });

  it("I5: the session agreement's escrow bound to another provider is -33005 not_bound_to_provider; nothing runs", async () => {
    const { buyer } = await threeAgents();
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000);
    const agreement = await negotiate(buyer, escrowId);
    await buyer.escrow.bind(escrowId, 'agent:mallory');
    await expect(buyer.invoke({ agreement })).rejects.toMatchObject({
      code: -33005,
      data: { reason: 'not_bound_to_provider' },
    });
  });

  it('I6: an escrow valid for less than the invoke needs is -33005 validity_too_short, before any work', async () => {
    const { buyer } = await threeAgents();
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 90_000);
    const agreement = await negotiate(buyer, escrowId);
    await buyer.escrow.bind(escrowId, 'agent:provider');
    await expect(buyer.invoke({ agreement })).rejects.toMatchObject({
      code: -33005,
      data: { reason: 'validity_too_short' },
    });
  });
});

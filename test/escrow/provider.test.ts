import { afterEach, describe, expect, it } from 'vitest';
import type { AcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createA2AAcmpBuyer, type A2AAcmpBuyer } from '../../src/connect/a2a-acmp-buyer.js';
import type { BuyerEscrow } from '../../src/a2a/escrow/buyer-escrow.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { createEscrowAgent } from '../../src/acmp/escrow/agent.js';
import type { Payload } from '../../src/acmp/wire/task-messages.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { escrowHost, secret } from './helpers.js';
import { waitFor } from '../helpers/wait-for.js';

afterEach(cleanup);

const INPUT: Payload = { type: 'text', data: 'Revenue grew 12% YoY.' };
const CLAIM_DELAY_MS = 300;

/** Three agents: an escrow agent, a provider that checks escrows there, and a buyer connected to both. */
async function threeAgents(options: { window?: number } = {}) {
  const escrow = await escrowHost({
    module: {
      settings: {
        minChallengeWindowMs: 200,
        defaultChallengeWindowMs: options.window ?? 60_000,
        disputeDeadlineMs: 60_000,
      },
    },
  });
  await escrow.credit('agent:buyer', '1');
  const provider = await startTestHost({
    modules: [
      acmpModule({
        capabilities: demoCapabilities({ stepMs: 5 }),
        heartbeatIntervalMs: 100,
        escrowAgent: {
          agentUrl: escrow.host.url,
          token: secret('provider'),
          payeeId: 'agent:provider',
          claimDelayMs: CLAIM_DELAY_MS,
          settleEveryMs: 50,
        },
      }),
    ],
  });
  const buyer = (await createA2AAcmpBuyer({
    agentUrl: provider.url,
    escrow: { agentUrl: escrow.host.url, token: secret('buyer') },
  })) as A2AAcmpBuyer & { escrow: BuyerEscrow };
  const balance = (who: string) => escrow.ledger.balance('', who);
  const conserved = async () => {
    const t = await escrow.ledger.totals();
    expect(t.balances + t.remaining + t.pending).toBe(t.credits);
  };
  return { escrow, provider, buyer, balance, conserved };
}

const invoke = (buyer: AcmpBuyer, escrowId: string, extra: Record<string, unknown> = {}) =>
  buyer.invoke({
    capability: 'sentiment-analysis',
    input: INPUT,
    max_price_cu: 0.005,
    proof_method: 'result-hash',
    escrow_id: escrowId,
    ...extra,
  });

describe('three agents: buyer, provider and escrow agent over A2A (design §4.5, F-scenarios)', () => {
  it('the provider card names the escrow agent and its payee id there', async () => {
    const { buyer, escrow } = await threeAgents();
    expect(buyer.escrowAgents).toEqual([{ url: escrow.host.url, payeeId: 'agent:provider' }]);
  });

  it('happy path: lock → bind → invoke → proof verified → release of cost_cu → reclaim of the rest', async () => {
    const { buyer, balance, conserved } = await threeAgents();
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000);
    await buyer.escrow.bind(escrowId, 'agent:provider', { agreedPriceCu: 0.005 });
    const result = await invoke(buyer, escrowId);
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
    expect(await balance('agent:provider')).toBe(BigInt(Math.round(result.cost_cu * 1e9)));
    expect((await balance('agent:buyer')) + (await balance('agent:provider'))).toBe(1_000_000_000n);
    await conserved();
  });

  it('F2: a silent buyer — the provider claims cost_cu after its delay, the window passes, it is paid; the buyer reclaims the rest', async () => {
    const { buyer, balance, conserved } = await threeAgents({ window: 300 });
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000);
    await buyer.escrow.bind(escrowId, 'agent:provider');
    const result = await invoke(buyer, escrowId);
    const cost = BigInt(Math.round(result.cost_cu * 1e9));
    await waitFor(async () => (await balance('agent:provider')) === cost);
    const status = await buyer.escrow.status(escrowId);
    expect(status).toMatchObject({ state: 'open', released_cu: result.cost_cu });
    expect(await buyer.escrow.reclaim(escrowId)).toMatchObject({ state: 'closed' });
    expect(await balance('agent:buyer')).toBe(1_000_000_000n - cost);
    await conserved();
  });

  it('F3: the provider vanishes after the bind — the buyer cannot reclaim (-35003) until expiry gives everything back', async () => {
    const { buyer, provider, balance, conserved } = await threeAgents();
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 600);
    await buyer.escrow.bind(escrowId, 'agent:provider');
    await provider.close();
    await expect(buyer.escrow.reclaim(escrowId)).rejects.toMatchObject({
      code: -35003,
      data: { reason: 'bound_unsettled' },
    });
    await waitFor(async () => (await balance('agent:buyer')) === 1_000_000_000n);
    expect(await buyer.escrow.status(escrowId)).toMatchObject({ state: 'closed', expired: true });
    await conserved();
  });

  it('I5: an escrow bound to another provider is -33005 not_bound_to_provider, never the agent’s -35005', async () => {
    const { buyer } = await threeAgents();
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000);
    await buyer.escrow.bind(escrowId, 'agent:mallory');
    await expect(invoke(buyer, escrowId)).rejects.toMatchObject({
      code: -33005,
      data: { reason: 'not_bound_to_provider' },
    });
    await expect(invoke(buyer, 'esc_does_not_exist')).rejects.toMatchObject({
      code: -33005,
      data: { reason: 'unknown' },
    });
  });

  it('I6: an escrow valid for less than deadline + claim delay + window is -33005 validity_too_short; too little is insufficient', async () => {
    const { buyer } = await threeAgents();
    const short = await buyer.escrow.lock(0.005, Date.now() + 90_000);
    await buyer.escrow.bind(short, 'agent:provider');
    await expect(invoke(buyer, short)).rejects.toMatchObject({
      code: -33005,
      data: { reason: 'validity_too_short' },
    });
    const small = await buyer.escrow.lock(0.001, Date.now() + 3_600_000);
    await buyer.escrow.bind(small, 'agent:provider');
    await expect(invoke(buyer, small)).rejects.toMatchObject({
      code: -33005,
      data: { reason: 'insufficient' },
    });
  });

  it('I4: one escrow backs one task — a second invoke is -33005 committed; of concurrent invokes exactly one runs', async () => {
    const { buyer } = await threeAgents();
    const escrowId = await buyer.escrow.lock(0.01, Date.now() + 3_600_000);
    await buyer.escrow.bind(escrowId, 'agent:provider');
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => invoke(buyer, escrowId)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes.filter((x) => x.status === 'rejected'))
      expect(o.reason).toMatchObject({ code: -33005, data: { reason: 'committed' } });
    await expect(invoke(buyer, escrowId)).rejects.toMatchObject({
      code: -33005,
      data: { reason: 'committed' },
    });
  });

  it('the buyer sees the provider’s claim on the escrow task, disputes it, and the operator’s resolution settles it', async () => {
    const { buyer, escrow, balance, conserved } = await threeAgents({ window: 60_000 });
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000);
    await buyer.escrow.bind(escrowId, 'agent:provider');
    const stop = new AbortController();
    const claimed = (async () => {
      for await (const status of buyer.escrow.watch(escrowId, { signal: stop.signal }))
        if (status.state === 'claimed') return status;
      return undefined;
    })();
    const result = await invoke(buyer, escrowId);
    expect(await claimed).toMatchObject({ claim: { amount_cu: result.cost_cu, task_id: result.task_id } });
    stop.abort();
    expect(
      await buyer.escrow.dispute(escrowId, 'the output is wrong', { note: 'see attached' }),
    ).toMatchObject({ state: 'disputed' });
    await createEscrowAgent({ store: escrow.ledger }).resolve(escrowId, 1_000_000n, 'agent:operator');
    expect(await buyer.escrow.status(escrowId)).toMatchObject({
      state: 'closed',
      dispute: { resolution: { by: 'operator', to_payee_cu: 0.001 } },
    });
    expect(await balance('agent:provider')).toBe(1_000_000n);
    expect(await balance('agent:buyer')).toBe(999_000_000n);
    await conserved();
  });

  it('a task that fails claims nothing and frees its escrow for the next task', async () => {
    const { buyer, balance } = await threeAgents();
    const escrowId = await buyer.escrow.lock(0.01, Date.now() + 3_600_000);
    await buyer.escrow.bind(escrowId, 'agent:provider');
    await expect(
      buyer.invoke({
        capability: 'slow-count',
        input: { type: 'json', data: { n: 100 } },
        max_price_cu: 0.01,
        timeout_ms: 50,
        escrow_id: escrowId,
      }),
    ).rejects.toMatchObject({ code: -33003 });
    await waitFor(async () => {
      try {
        await invoke(buyer, escrowId);
        return true;
      } catch {
        return false;
      }
    });
    await new Promise((resolve) => setTimeout(resolve, CLAIM_DELAY_MS * 2));
    expect(await balance('agent:provider')).toBe(0n);
  });
});

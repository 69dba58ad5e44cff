import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer, type AcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createA2AAcmpBuyer, type A2AAcmpBuyer } from '../../src/connect/a2a-acmp-buyer.js';
import type { BuyerEscrow } from '../../src/a2a/escrow/buyer-escrow.js';
import { ESCROW_METHOD } from '../../src/acmp/escrow/constants.js';
import type { Payload } from '../../src/acmp/wire/task-messages.js';
import { createAcmpBuyer as createPickedBuyer } from '../../src/connect/acmp-buyer.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { connectMcpAcmpBuyer } from '../../src/mcp/buyer.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { MemoryWalletStore } from '../../src/storage/memory/wallet-store-memory.js';
import { Wallet } from '../../src/wallet/wallet.js';
import { escrowHost, secret } from '../escrow/helpers.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { walletConfig } from '../helpers/wallet-contract.js';

afterEach(cleanup);

const INPUT: Payload = { type: 'text', data: 'Revenue grew 12% YoY.' };

/** An escrow agent that funded the buyer with 1 CU, a provider that checks escrows there, and a wallet. */
async function agents(limits: Record<string, unknown>) {
  const escrow = await escrowHost();
  await escrow.credit('agent:buyer', '1');
  const provider = await startTestHost({
    modules: [
      acmpModule({
        capabilities: demoCapabilities({ stepMs: 1 }),
        escrowAgent: { agentUrl: escrow.host.url, token: secret('provider'), payeeId: 'agent:provider' },
      }),
    ],
  });
  const direct = await startTestHost({
    modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 1 }) })],
  });
  const wallet = new Wallet(walletConfig(limits), new MemoryWalletStore());
  const buyer = (await createA2AAcmpBuyer({
    agentUrl: provider.url,
    escrow: { agentUrl: escrow.host.url, token: secret('buyer') },
    wallet,
  })) as A2AAcmpBuyer & { escrow: BuyerEscrow };
  const balance = () => escrow.ledger.balance('', 'agent:buyer');
  return { escrow, provider, direct, wallet, buyer, balance };
}

const invoke = (buyer: Pick<AcmpBuyer, 'invoke'>, extra: Record<string, unknown> = {}) =>
  buyer.invoke({
    capability: 'sentiment-analysis',
    input: INPUT,
    max_price_cu: 0.005,
    proof_method: 'result-hash',
    ...extra,
  });

describe('every outbound economic operation passes through the wallet (Layer 7 §6.2)', () => {
  it('a lock above the per-task maximum is refused locally: the agent never sees it, the log does', async () => {
    const { buyer, wallet, balance } = await agents({ per_task_max_cu: 0.004 });
    await expect(buyer.escrow.lock(0.005, Date.now() + 3_600_000)).rejects.toMatchObject({
      code: 'SPEND_DENIED',
    });
    expect(await balance()).toBe(1_000_000_000n);
    expect(await wallet.log()).toMatchObject([
      { kind: 'denied', amount: 5_000_000n, outcome: 'denied:per_task_max_cu' },
    ]);
    expect(await wallet.pending()).toEqual([]);
  });

  it('the escrow client the buyer exposes cannot be used around the wallet', async () => {
    const { buyer, balance } = await agents({ total_cap_cu: 0.001 });
    await expect(
      buyer.escrow.client.call(ESCROW_METHOD.lock, {
        op_ref: 'x',
        amount_cu: 0.5,
        valid_until_ms: Date.now() + 60_000,
      }),
    ).rejects.toMatchObject({ code: 'SPEND_DENIED' });
    expect(await balance()).toBe(1_000_000_000n);
  });

  it('lock, bind, invoke, release and reclaim are each logged once, and the reclaim gives the cap back', async () => {
    const { buyer, wallet } = await agents({ total_cap_cu: 0.01, per_task_max_cu: 0.005 });
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000);
    await buyer.escrow.bind(escrowId, 'agent:provider', { agreedPriceCu: 0.005 });
    const result = await invoke(buyer, { escrow_id: escrowId });
    await buyer.escrow.releaseFor(
      escrowId,
      { payeeId: 'agent:provider', result },
      { output: result.output!, input: INPUT, proofMethod: 'result-hash' },
    );
    const reclaimed = await buyer.escrow.reclaim(escrowId);
    const log = await wallet.log();
    expect(log.map((e) => [e.kind, e.outcome])).toEqual([
      ['lock', 'ok'],
      ['bind', 'ok'],
      ['invoke', 'ok'],
      ['release', 'ok'],
      ['reclaim', 'ok'],
    ]);
    expect(log.every((e) => e.kind === 'invoke' || e.escrowId === escrowId)).toBe(true);
    expect(log[3]).toMatchObject({ taskId: result.task_id, counterparty: 'agent:provider' });
    const spent = 5_000_000n - BigInt(Math.round((reclaimed.reclaimed_cu as number) * 1e9));
    const headroom = (await wallet.headroom()).wallet as { total_cap_cu: { spent_cu: number } };
    expect(BigInt(Math.round(headroom.total_cap_cu.spent_cu * 1e9))).toBe(spent);
    expect(await wallet.held()).toEqual([{ escrowId, agent: expect.any(String) as string, amount: spent }]);
  });

  it('an invoke under an escrow is checked against the per-task maximum by its max_price_cu', async () => {
    const { buyer, wallet } = await agents({ per_task_max_cu: 0.004 });
    await expect(invoke(buyer, { escrow_id: 'esc_any' })).rejects.toMatchObject({ code: 'SPEND_DENIED' });
    expect((await wallet.log())[0]).toMatchObject({ kind: 'denied', escrowId: 'esc_any' });
  });

  it('direct invokes count their cost_cu; the hourly rate stops a loop before the provider is asked', async () => {
    const { direct, wallet } = await agents({ rate_cu_per_hour: 0.02 });
    const buyer = await createPickedBuyer({ agentUrl: direct.url, wallet });
    const costs: number[] = [];
    let stopped: unknown;
    for (let i = 0; i < 20 && stopped === undefined; i++) {
      try {
        costs.push((await invoke(buyer)).cost_cu);
      } catch (error) {
        stopped = error;
      }
    }
    expect(stopped).toMatchObject({ code: 'SPEND_DENIED', breaches: [{ limit: 'rate_cu_per_hour' }] });
    const spent = costs.reduce((sum, c) => sum + BigInt(Math.round(c * 1e9)), 0n);
    // The loop ran while what was spent plus the next ceiling fitted the rate, and not once more.
    expect(spent + 5_000_000n).toBeGreaterThan(20_000_000n);
    expect(spent - BigInt(Math.round(costs.at(-1)! * 1e9)) + 5_000_000n).toBeLessThanOrEqual(20_000_000n);
    const log = await wallet.log();
    expect(log.filter((e) => e.kind === 'invoke')).toHaveLength(costs.length);
    expect(log.at(-1)).toMatchObject({ kind: 'denied', outcome: 'denied:rate_cu_per_hour' });
  });

  it('an invoke without max_price_cu asks for an unbounded amount, which a configured limit refuses', async () => {
    const { direct, wallet } = await agents({ total_cap_cu: 100 });
    const buyer = await createPickedBuyer({ agentUrl: direct.url, wallet, prefer: ['mcp'] });
    await expect(invoke(buyer, { max_price_cu: undefined })).rejects.toMatchObject({ code: 'SPEND_DENIED' });
    await expect(invoke(buyer)).resolves.toMatchObject({ cost_cu: expect.any(Number) as number });
    await buyer.close();
  });

  it('an offer whose price exceeds the per-task maximum is not accepted; a cheaper one is, and logged', async () => {
    const host = await startTestHost({
      modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 1 }), negotiation: true })],
    });
    const wallet = new Wallet(walletConfig({ per_task_max_cu: 0.0021 }), new MemoryWalletStore());
    const buyer = await createAcmpBuyer({ agentUrl: host.url, wallet });
    const ask = (input: string) => ({
      capability: 'sentiment-analysis',
      max_price_cu: 1,
      input: { type: 'text' as const, data: input },
    });
    const agreement = await buyer.negotiate(ask('Good.'));
    expect(agreement.offer.price_cu).toBeLessThanOrEqual(0.0021);
    const expensive = await buyer.quote({ ...ask('x'.repeat(2_000)), input_tokens_est: 500 });
    expect(expensive.price_cu).toBeGreaterThan(0.0021);
    await expect(buyer.accept({ offer_id: expensive.offer_id })).rejects.toMatchObject({
      code: 'SPEND_DENIED',
    });
    await expect(buyer.negotiate({ ...ask('y'), input_tokens_est: 500 })).rejects.toMatchObject({
      code: 'SPEND_DENIED',
    });
    expect((await wallet.log()).map((e) => [e.kind, e.outcome])).toEqual([
      ['accept', 'ok'],
      ['denied', 'denied:per_task_max_cu'],
      ['denied', 'denied:per_task_max_cu'],
    ]);
  });

  it('over MCP too: an accept above the per-task maximum is refused before it is sent', async () => {
    const host = await startTestHost({
      modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 1 }), negotiation: true })],
    });
    const wallet = new Wallet(walletConfig({ per_task_max_cu: 0.003 }), new MemoryWalletStore());
    const buyer = await connectMcpAcmpBuyer({ endpoint: { url: `${host.url}/mcp` }, wallet });
    const ask = {
      capability: 'sentiment-analysis',
      max_price_cu: 1,
      input: { type: 'text' as const, data: 'ok' },
    };
    const cheap = await buyer.quote(ask);
    await expect(buyer.accept({ offer_id: cheap.offer_id })).resolves.toMatchObject({
      price_cu: cheap.price_cu,
    });
    const expensive = await buyer.quote({ ...ask, input_tokens_est: 5_000 });
    await expect(buyer.accept({ offer_id: expensive.offer_id })).rejects.toMatchObject({
      code: 'SPEND_DENIED',
    });
    await expect(buyer.accept({ offer_id: 'never-quoted' })).rejects.toMatchObject({ code: 'SPEND_DENIED' });
    expect((await wallet.log()).map((e) => e.kind)).toEqual(['accept', 'denied', 'denied']);
    await buyer.close();
  });
});

import { z } from 'zod';
import { createA2AAcmpBuyer, type A2AAcmpBuyer } from '../../connect/a2a-acmp-buyer.js';
import type { BuyerEscrow } from '../../a2a/escrow/buyer-escrow.js';
import { demoCapabilities } from '../../demo/capabilities.js';
import { formatCu } from '../../acmp/escrow/amounts.js';
import type { AcmpResult, Payload } from '../../acmp/wire/task-messages.js';
import { resolveHostConfig } from '../../server/config.js';
import { startHost, type RunningHost } from '../../server/host.js';
import type { HostModule } from '../../server/module.js';
import { acmpModule } from '../../server/modules/acmp.js';
import { escrowModule } from '../../server/modules/escrow.js';
import { KyselyEscrowStore } from '../../storage/escrow/escrow-store-kysely.js';
import { expectShape, expectThat } from './expect.js';
import type { DemoContext, DemoScenario } from './scenarios.js';

const BUYER_TOKEN = 'buyer=demo-buyer-secret-0123456789';
const PROVIDER_TOKEN = 'provider=demo-provider-secret-0123456789';
const INPUT: Payload = { type: 'text', data: 'Margins improved in every region thanks to strong demand.' };

/** Three agents — buyer, provider, escrow agent — settling two purchases through escrow (L4). */
export const escrowScenario: DemoScenario = {
  title:
    'ACMP escrow over A2A: three agents — buyer, provider, escrow agent — lock, invoke, release or claim, reclaim',
  async run(ctx) {
    const hosts: RunningHost[] = [];
    try {
      const agent = await start(ctx, {
        name: 'escrow-agent',
        modules: [
          escrowModule({
            tickMs: 100,
            settings: { minChallengeWindowMs: 500, defaultChallengeWindowMs: 1_000 },
          }),
        ],
        tokens: [BUYER_TOKEN, PROVIDER_TOKEN],
      });
      hosts.push(agent);
      const provider = await start(ctx, {
        name: 'provider',
        modules: [
          acmpModule({
            capabilities: demoCapabilities({ stepMs: 5 }),
            escrowAgent: {
              agentUrl: agent.url,
              token: secretOf(PROVIDER_TOKEN),
              caCert: ctx.caCert,
              payeeId: 'agent:provider',
              claimDelayMs: 500,
              settleEveryMs: 100,
            },
          }),
        ],
      });
      hosts.push(provider);
      ctx.say(`   escrow agent at ${agent.url}, provider at ${provider.url} (checks escrow_id there)`);
      expectThat(agent.database !== undefined, 'the escrow agent to keep its ledger in a database');
      const ledger = new KyselyEscrowStore(agent.database);
      await ledger.credit('', 'agent:buyer', 1_000_000_000n);
      const balances = async (when: string) => {
        const [b, p] = [await ledger.balance('', 'agent:buyer'), await ledger.balance('', 'agent:provider')];
        ctx.say(`   balances ${when}: buyer ${formatCu(b)} CU, provider ${formatCu(p)} CU`);
        return b + p;
      };
      await balances('before');
      const buyer = await createA2AAcmpBuyer({
        agentUrl: provider.url,
        caCert: ctx.caCert,
        escrow: { agentUrl: agent.url, token: secretOf(BUYER_TOKEN), caCert: ctx.caCert },
      });
      expectThat(hasEscrow(buyer), 'the buyer to pay through the escrow agent');
      const payee = buyer.escrowAgents[0]?.payeeId;
      expectThat(payee === 'agent:provider', "the provider's card to name its payee id at the escrow agent");
      await fastPath(ctx, buyer, payee);
      await silentBuyer(ctx, buyer, payee);
      const total = await balances('after');
      const t = await ledger.totals();
      expectThat(
        total === 1_000_000_000n && t.balances + t.remaining + t.pending === t.credits,
        'conservation: nothing created or lost',
      );
      ctx.say(
        `   ledger: balances ${formatCu(t.balances)} + held ${formatCu(t.remaining)} + pending ${formatCu(t.pending)} = credited ${formatCu(t.credits)} CU`,
      );
    } finally {
      for (const host of hosts.reverse()) await host.close();
    }
  },
};

async function fastPath(ctx: DemoContext, buyer: EscrowBuyer, payee: string): Promise<void> {
  const { escrowId, result } = await invokeUnderEscrow(buyer, payee, { bind: { agreedPriceCu: 0.005 } });
  ctx.say(`   acmp/escrowLock 0.005 CU → ${escrowId}; acmp/escrowBind → ${payee}`);
  ctx.say(`   acmp/invoke with escrow_id → ${JSON.stringify(result.output?.data)} for ${result.cost_cu} CU`);
  expectThat(result.output !== undefined, 'the result to carry an output');
  await buyer.escrow.releaseFor(
    escrowId,
    { payeeId: payee, result },
    {
      output: result.output,
      input: INPUT,
      proofMethod: 'result-hash',
    },
  );
  const rest = expectShape(ReclaimedSchema, await buyer.escrow.reclaim(escrowId), 'an escrowReclaim result');
  ctx.say(
    `   proof verified → acmp/escrowRelease ${result.cost_cu} CU; acmp/escrowReclaim ${JSON.stringify(rest.reclaimed_cu)} CU → ${rest.state}`,
  );
}

async function silentBuyer(ctx: DemoContext, buyer: EscrowBuyer, payee: string): Promise<void> {
  const { escrowId, result } = await invokeUnderEscrow(buyer, payee);
  ctx.say(
    `   silent buyer: invoke for ${result.cost_cu} CU on ${escrowId}, no release; following the escrow task…`,
  );
  const stop = new AbortController();
  for await (const status of buyer.escrow.watch(escrowId, { signal: stop.signal })) {
    const { claim, released_cu } = expectShape(WatchedSchema, status, 'an escrowStatus with its claim');
    ctx.say(
      `   escrow task: ${status.state}${claim ? ` (claim ${claim.amount_cu} CU, window ends in ${Math.max(0, claim.window_ends_ms - Date.now())} ms)` : ''}, released ${released_cu} CU`,
    );
    if (status.state === 'open' && released_cu > 0) break;
  }
  stop.abort();
  const rest = await buyer.escrow.reclaim(escrowId);
  ctx.say(
    `   the provider claimed with its proof, the window passed, the agent auto-released; the buyer reclaims ${JSON.stringify(rest.reclaimed_cu)} CU`,
  );
}

/** A buyer created with an escrow agent to pay through (`createA2AAcmpBuyer`'s `escrow` option). */
export type EscrowBuyer = A2AAcmpBuyer & { readonly escrow: BuyerEscrow };

/** Whether the buyer pays through an escrow agent. */
export function hasEscrow(buyer: A2AAcmpBuyer): buyer is EscrowBuyer {
  return buyer.escrow !== undefined;
}

/** The fields of an escrowReclaim result [L4 §4.4] the demo prints. */
const ReclaimedSchema = z.looseObject({ state: z.string(), reclaimed_cu: z.number() });

/** The fields of an escrowStatus [L4 §4.7] the silent buyer follows: its claim (null until one) and releases. */
const WatchedSchema = z.looseObject({
  released_cu: z.number(),
  claim: z.looseObject({ amount_cu: z.number(), window_ends_ms: z.number() }).nullable(),
});

/** Locks 0.005 CU for an hour, binds it to `payee` and invokes the demo capability under it (L4 §4.1–§4.2). */
export async function invokeUnderEscrow(
  buyer: EscrowBuyer,
  payee: string,
  options: { lock?: { challengeWindowMs?: number }; bind?: { agreedPriceCu?: number } } = {},
): Promise<{ escrowId: string; result: AcmpResult }> {
  const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000, options.lock);
  await buyer.escrow.bind(escrowId, payee, options.bind);
  const result = await buyer.invoke({
    capability: 'sentiment-analysis',
    input: INPUT,
    max_price_cu: 0.005,
    proof_method: 'result-hash',
    escrow_id: escrowId,
  });
  return { escrowId, result };
}

/** One of the scenario's agents: a host of its own, with its SQLite file under the demo's data directory. */
interface Agent {
  name: string;
  modules: HostModule[];
  /** Bearer tokens it accepts (`name=secret`); none: no authentication. */
  tokens?: string[];
}

export async function start(ctx: DemoContext, { name, modules, tokens = [] }: Agent): Promise<RunningHost> {
  const config = resolveHostConfig(
    {
      host: '127.0.0.1',
      port: '0',
      'data-dir': ctx.dataDir,
      db: `sqlite:${ctx.dataDir}/${name}.sqlite`,
      'tls-self-signed': true,
      token: tokens,
    },
    {},
  );
  return startHost(config, { modules });
}

export function secretOf(token: string): string {
  return token.slice(token.indexOf('=') + 1);
}

import { createAcmpBuyer, type PickedAcmpBuyer } from '../../connect/acmp-buyer.js';
import type { AcmpResult, Payload } from '../../acmp/wire/task-messages.js';
import { verifyProof } from '../../acmp/wire/proof.js';
import { boundedTaskIds } from '../../shared/ids.js';
import { expectThat } from './expect.js';
import type { DemoContext, DemoScenario } from './scenarios.js';

const INPUT: Payload = { type: 'text', data: 'Margins improved in every region thanks to strong demand.' };

/**
 * One capability bought over both bindings of the same provider: the buyer picks MCP, then A2A; both see
 * the same capability object and the same proof, and a retry over A2A of the task bought over MCP replays
 * it from the one task record (docs/acmp-mcp-binding.md).
 */
export const acmpMcpScenario: DemoScenario = {
  title: 'ACMP over MCP and A2A: one provider, one task record — the buyer picks the binding',
  async run(ctx) {
    const mcp = await createAcmpBuyer({ agentUrl: ctx.url, prefer: ['mcp', 'a2a'], caCert: ctx.caCert });
    const a2a = await createAcmpBuyer({ agentUrl: ctx.url, prefer: ['a2a', 'mcp'], caCert: ctx.caCert });
    try {
      expectThat(mcp.binding === 'mcp' && a2a.binding === 'a2a', 'the buyer to pick the preferred binding');
      expectThat(
        JSON.stringify(mcp.capabilityObject) === JSON.stringify(a2a.capabilityObject),
        'one capability object on both bindings',
      );
      ctx.say(
        `   prefer [mcp, a2a] → ${mcp.binding} (server/discover extension org.a2agora/acmp); prefer [a2a, mcp] → ${a2a.binding} (agent card)`,
      );
      const task_id = boundedTaskIds.newId('task');
      const params = {
        task_id,
        capability: 'sentiment-analysis',
        input: INPUT,
        max_price_cu: 0.005,
        proof_method: 'result-hash',
      };
      const overMcp = await buy(ctx, mcp, params);
      const overA2a = await buy(ctx, a2a, params);
      expectThat(overA2a.proof?.hash === overMcp.proof?.hash, 'the A2A retry to replay the MCP purchase');
      ctx.say('   the same task_id retried over A2A replays the MCP purchase: same proof, nothing ran twice');
    } finally {
      await mcp.close();
      await a2a.close();
    }
  },
};

async function buy(
  ctx: DemoContext,
  buyer: PickedAcmpBuyer,
  params: Parameters<PickedAcmpBuyer['invoke']>[0],
): Promise<AcmpResult> {
  const result = await buyer.invoke(params);
  expectThat(result.output !== undefined, 'the result to carry an output');
  const check = verifyProof(result.proof, { method: 'result-hash', output: result.output, input: INPUT });
  expectThat(check.ok, 'the result-hash proof to verify');
  ctx.say(
    `   over ${buyer.binding}: sentiment-analysis → ${JSON.stringify(result.output?.data)} for ${result.cost_cu} CU, proof ${String(result.proof?.hash).slice(0, 23)}… verified`,
  );
  return result;
}

import type { DagEvent } from '../../acmp/dag/dag-events.js';
import { DagRunner } from '../../acmp/dag/dag-runner.js';
import { MemoryDagRunStore } from '../../storage/memory/dag-run-store-memory.js';
import { ConnectDagBuyerPort } from '../../connect/dag-buyer.js';
import { demoCapabilities } from '../../demo/capabilities.js';
import type { RunningHost } from '../../server/host.js';
import { acmpModule } from '../../server/modules/acmp.js';
import { start } from './escrow.js';
import { expectThat } from './expect.js';
import type { DemoScenario } from './scenarios.js';

const TEXT =
  'Revenue grew strongly this quarter. Customers are happy with the new service. The weather was mild. ' +
  'Margins improved in every region. The office moved to a new floor. Demand for the product rose again.';

/**
 * Layer 2: a three-stage pipeline across three providers — the demo host summarizes six sentences to
 * four (streaming them as Layer 1 §7.1 chunks: its edge is stream_eligible), a second provider digests
 * the summary to three, a third rates the digest's sentiment. The A2A downstream takes the §5 fallback.
 */
export const acmpDagScenario: DemoScenario = {
  title: 'ACMP DAG: a three-provider pipeline with one node streaming',
  async run(ctx) {
    const hosts: RunningHost[] = [];
    const port = new ConnectDagBuyerPort({ caCert: ctx.caCert });
    try {
      for (const name of ['dag-provider-b', 'dag-provider-c']) {
        const modules = [acmpModule({ capabilities: demoCapabilities({ stepMs: 5 }) })];
        hosts.push(await start(ctx, { name, modules }));
      }
      const [b, c] = hosts;
      const node = (
        id: string,
        capability: string,
        at: { provider: string | undefined; input: unknown },
      ) => ({
        task_id: id,
        capability,
        input: at.input,
        max_price_cu: 0.01,
        provider: at.provider,
      });
      const dag = {
        dag_id: 'dag_demo',
        tasks: [
          node('summary', 'summarize', {
            provider: ctx.url,
            input: { type: 'json', data: { text: TEXT, max_sentences: 4 } },
          }),
          node('digest', 'summarize', { provider: b?.url, input: { source: { from_task: 'summary' } } }),
          node('sentiment', 'sentiment-analysis', {
            provider: c?.url,
            input: { source: { from_task: 'digest' } },
          }),
        ],
        edges: [
          { from: 'summary', to: 'digest', stream_eligible: true },
          { from: 'digest', to: 'sentiment' },
        ],
      };
      const events: DagEvent[] = [];
      const runner = new DagRunner(dag, {
        runId: `run_demo_${crypto.randomUUID()}`,
        store: new MemoryDagRunStore(),
        port,
        terms: { budgetCu: 0.03 },
        onEvent: (e) => events.push(e),
      });
      ctx.say(`   providers: summary at ${ctx.url}, digest at ${b?.url}, sentiment at ${c?.url}`);
      const result = await runner.run();
      const chunks = events.flatMap((e) => (e.kind === 'chunk' ? [e] : []));
      expectThat(chunks.length > 1 && chunks.every((e) => e.nodeId === 'summary'), 'only summary to stream');
      ctx.say(
        `   summary streamed ${chunks.length} chunks (seq ${chunks.map((e) => e.params.seq).join(', ')})`,
      );
      for (const e of events)
        if (e.kind === 'fallback') ctx.say(`   edge ${e.from} → ${e.to}: literal input (${e.reason})`);
      expectThat(result.state === 'completed', `the run to complete (it ended ${result.state})`);
      const proofs = Object.values(result.nodes).filter(
        (n) => n.outcome?.state === 'completed' && n.outcome.proof,
      );
      expectThat(proofs.length === 3, 'all three nodes to complete with a verified proof');
      const digest = result.nodes['digest']?.outcome;
      const digestText = digest?.state === 'completed' ? digest.output.data : undefined;
      ctx.say(
        `   digest ${JSON.stringify(digestText)} → sentiment ${JSON.stringify(result.result['sentiment']?.data)}`,
      );
      ctx.say(`   run ${result.state}: 3 nodes, ${result.totalCostCu} CU of a ${result.budgetCu} CU budget`);
    } finally {
      await port.close();
      await Promise.all(hosts.map((h) => h.close()));
    }
  },
};

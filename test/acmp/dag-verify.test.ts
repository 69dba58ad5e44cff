import { afterEach, describe, expect, it } from 'vitest';
import type { BuyerEvent } from '../../src/acmp/buyer/buyer.js';
import type { DagBuyerPort, DagProvider } from '../../src/acmp/dag/dag-ports.js';
import type { AcmpResult } from '../../src/acmp/wire/task-messages.js';
import { ConnectDagBuyerPort } from '../../src/connect/dag-buyer.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, onCleanup } from '../helpers/host.js';
import { counted, runner, threeHosts } from './dag-helpers.js';

afterEach(cleanup);

const echo = counted('echo', (i) => ({ type: 'json', data: { echo: i.data } }));
const hosts = shared(() => threeHosts([[], [echo], []]));

/**
 * The real buyer port, with every result from one provider rewritten in transit (a provider that lies
 * about its proof or its cost): the runner sees exactly what such a provider would send.
 */
function lyingPort(liar: () => string | undefined, rewrite: (r: AcmpResult) => AcmpResult): DagBuyerPort {
  const real = new ConnectDagBuyerPort();
  onCleanup(() => real.close());
  return {
    close: () => real.close(),
    async provider(url, options): Promise<DagProvider> {
      const provider = await real.provider(url, options);
      if (url !== liar()) return provider;
      return {
        capabilityObject: provider.capabilityObject,
        async *stream(params, call): AsyncIterable<BuyerEvent> {
          for await (const event of provider.stream(params, call))
            yield event.kind === 'result' ? { ...event, result: rewrite(event.result) } : event;
        },
      };
    },
  };
}

function dag(): Record<string, unknown> {
  const [h0, h1, h2] = hosts();
  const input = { type: 'text', data: 'Revenue grew strongly and customers are happy.' };
  return {
    dag_id: 'dag_liar',
    tasks: [
      { task_id: 'feel', capability: 'sentiment-analysis', input, max_price_cu: 0.01, provider: h0?.url },
      {
        task_id: 'next',
        capability: 'echo',
        input: { source: { from_task: 'feel' } },
        max_price_cu: 0.01,
        provider: h1?.url,
      },
      { task_id: 'side', capability: 'sentiment-analysis', input, max_price_cu: 0.01, provider: h2?.url },
    ],
    edges: [{ from: 'feel', to: 'next' }],
  };
}

describe('a provider whose result does not hold (docs/acmp-dag.md "Execution")', () => {
  it('a proof that fails verification fails the node; its output feeds nobody; dependents cancelled', async () => {
    const port = lyingPort(
      () => hosts()[0]?.url,
      (r) => ({ ...r, proof: { method: 'result-hash', hash: `sha256:${'0'.repeat(64)}` } }),
    );
    const before = echo.runs();
    const result = await runner(dag(), { port, policy: 'best-effort' }).run();
    expect(result.nodes['feel']).toMatchObject({
      state: 'failed',
      outcome: { error: { code: 'DAG_PROOF_FAILED', data: { reason: 'hash_mismatch' } } },
    });
    expect(result.nodes['next']).toMatchObject({
      state: 'cancelled',
      outcome: { reason: 'upstream feel failed' },
    });
    expect(echo.runs()).toBe(before);
    expect(result.nodes['side']?.state).toBe('completed');
    expect(result.state).toBe('failed');
    expect(Object.keys(result.result)).toEqual(['side']);
  });

  it('a cost above the node ceiling fails the node, is counted, and fail-fast cancels the rest', async () => {
    const port = lyingPort(
      () => hosts()[0]?.url,
      (r) => ({ ...r, cost_cu: 0.02 }),
    );
    const before = echo.runs();
    const result = await runner(dag(), { port, policy: 'fail-fast' }).run();
    expect(result.nodes['feel']).toMatchObject({
      state: 'failed',
      outcome: {
        error: { code: 'DAG_OVER_CEILING', data: { cost_cu: 0.02, max_price_cu: 0.01 } },
        costCu: 0.02,
      },
    });
    expect(result.nodes['next']?.state).toBe('cancelled');
    expect(echo.runs()).toBe(before);
    expect(result.totalCostCu).toBeGreaterThanOrEqual(0.02);
    expect(result.state).toBe('failed');
  });
});

describe('an unreachable provider', () => {
  it('is refused with a code naming the node and the provider, not a bare "fetch failed"', async () => {
    const dead = 'https://127.0.0.1:1';
    const tasks = [
      {
        task_id: 'lost',
        capability: 'echo',
        input: { type: 'text', data: 'x' },
        max_price_cu: 0.01,
        provider: dead,
      },
    ];
    const run = runner({ dag_id: 'dag_dead', tasks, edges: [] }).run();
    await expect(run).rejects.toMatchObject({
      code: 'DAG_PROVIDER_UNREACHABLE',
      message: expect.stringMatching(/task "lost".*https:\/\/127\.0\.0\.1:1/) as unknown,
    });
  });
});

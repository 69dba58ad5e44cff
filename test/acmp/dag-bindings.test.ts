import { afterEach, describe, expect, it } from 'vitest';
import { DagError } from '../../src/acmp/dag/dag-errors.js';
import type { Payload } from '../../src/acmp/wire/task-messages.js';
import { resultHash } from '../../src/acmp/wire/proof.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup } from '../helpers/host.js';
import { sample, scrape } from '../helpers/metrics.js';
import { aggregate, counted, nodeIs, runner, splitText } from './dag-helpers.js';
import { acmpHost, type AcmpTestHost } from './helpers.js';

afterEach(cleanup);

// One provider host per binding the buyer speaks (docs/acmp-dag.md "The DAG file": a task's `binding`);
// each host answers only over its binding, which its request metrics show.
const BINDINGS = ['JSONRPC', 'HTTP+JSON', 'GRPC', 'MCP'] as const;
type Binding = (typeof BINDINGS)[number];
/** The `binding` label of the host's request counter for each (docs/operations.md "Metrics"). */
const LABEL: Record<Binding, string> = { JSONRPC: 'jsonrpc', 'HTTP+JSON': 'rest', GRPC: 'grpc', MCP: 'mcp' };

const long = Object.fromEntries(
  BINDINGS.map((b) => [b, counted('long', (i) => ({ type: 'json', data: { echo: i.data } }), 10_000)]),
) as Record<Binding, ReturnType<typeof counted>>;

function host(binding: Binding, extra: AcmpCapability[]): Promise<AcmpTestHost> {
  return acmpHost({
    capabilities: [...demoCapabilities({ stepMs: 5 }), long[binding], ...extra],
    ...(binding === 'GRPC' ? { transport: 'grpc' as const } : {}),
  });
}

const hosts = shared(async () => {
  const [j, r, g, m] = await Promise.all([
    host('JSONRPC', [counted('text-split', splitText)]),
    host('HTTP+JSON', []),
    host('GRPC', []),
    host('MCP', [counted('result-aggregation', aggregate)]),
  ]);
  return { JSONRPC: j, 'HTTP+JSON': r, GRPC: g, MCP: m };
});

function task(id: string, binding: Binding, extra: Record<string, unknown>): Record<string, unknown> {
  return { task_id: id, max_price_cu: 0.01, provider: hosts()[binding].url, binding, ...extra };
}

/** Requests a host answered, per binding label (the card fetch counts as `http`). */
async function requestsByBinding(url: string): Promise<Record<string, number>> {
  const text = await scrape(url);
  const counts: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^a2a_commerce_requests_total\{([^}]*)\} (\S+)$/.exec(line);
    const label = match && /binding="([^"]+)"/.exec(match[1] ?? '')?.[1];
    if (label) counts[label] = (counts[label] ?? 0) + Number(match[2]);
  }
  return counts;
}

const TEXT = 'Revenue grew strongly and customers are happy. Sales fell badly and margins are terrible.';
const SUMMARY_TEXT = 'Revenue grew strongly. Customers are happy. The weather was mild. Margins improved.';

describe('a DAG across every binding the buyer speaks (Layer 2 §3, docs/acmp-dag.md "The DAG file")', () => {
  it('runs nodes over JSON-RPC, HTTP+JSON, gRPC and MCP, references crossing bindings, one streamed, proofs verified', async () => {
    const dag = {
      dag_id: 'dag_bindings',
      tasks: [
        task('split', 'JSONRPC', { capability: 'text-split', input: { type: 'text', data: TEXT } }),
        task('feel_a', 'HTTP+JSON', {
          capability: 'sentiment-analysis',
          input: { source: { from_task: 'split', field: 'data.chunks[0]' } },
        }),
        task('feel_b', 'GRPC', {
          capability: 'sentiment-analysis',
          input: { source: { from_task: 'split', field: 'data.chunks[1]' } },
        }),
        task('agg', 'MCP', {
          capability: 'result-aggregation',
          input: { source: { from_tasks: ['feel_a', 'feel_b'] } },
        }),
        task('sum', 'MCP', { capability: 'summarize', input: { type: 'text', data: SUMMARY_TEXT } }),
        task('feel_sum', 'GRPC', {
          capability: 'sentiment-analysis',
          input: { source: { from_task: 'sum' } },
        }),
      ],
      edges: [
        { from: 'split', to: 'feel_a' },
        { from: 'split', to: 'feel_b' },
        { from: 'feel_a', to: 'agg' },
        { from: 'feel_b', to: 'agg' },
        { from: 'sum', to: 'feel_sum', stream_eligible: true },
      ],
    };
    const before = await Promise.all(BINDINGS.map((b) => requestsByBinding(hosts()[b].url)));
    const r = runner(dag, { terms: { budgetCu: 0.06 } });
    const result = await r.run();

    expect(result.state).toBe('completed');
    expect(result.result['agg']).toEqual({
      type: 'json',
      data: { count: 2, sentiments: ['positive', 'negative'] },
    });
    expect(result.result['feel_sum']).toMatchObject({ type: 'json', data: { sentiment: 'positive' } });
    // Every proof holds the hash of the output it came with (the runner verified it before feeding it on).
    for (const [id, node] of Object.entries(result.nodes)) {
      expect(node.outcome, id).toMatchObject({ state: 'completed', proof: { method: 'result-hash' } });
      const outcome = node.outcome as { output: Payload; proof: { hash: string } };
      expect(outcome.proof.hash, id).toBe(resultHash(outcome.output));
    }
    // The MCP node streamed its chunks, in order; its stream_eligible edge fell back (§5).
    const seqs = r.events.flatMap((e) => (e.kind === 'chunk' && e.nodeId === 'sum' ? [e.params.seq] : []));
    expect(seqs.length).toBeGreaterThan(1);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(r.events).toContainEqual({
      kind: 'fallback',
      from: 'sum',
      to: 'feel_sum',
      reason: 'downstream_no_input_streaming',
    });
    // Each host was called over its binding only (besides the card fetch, `http`).
    const after = await Promise.all(BINDINGS.map((b) => requestsByBinding(hosts()[b].url)));
    BINDINGS.forEach((b, i) => {
      const grew = Object.keys(after[i]!).filter((l) => after[i]![l] !== before[i]![l] && l !== 'http');
      expect(grew, b).toEqual([LABEL[b]]);
    });
  });

  it.each(['HTTP+JSON', 'GRPC', 'MCP'] as const)(
    'a cancelled node in flight over %s gets acmp/cancel at its provider (Layer 2 §4)',
    async (binding) => {
      const abortsBefore = long[binding].aborted();
      const runsBefore = long[binding].runs();
      const dag = {
        dag_id: 'dag_cancel_bindings',
        tasks: [
          task('up', 'JSONRPC', { capability: 'sentiment-analysis', input: { type: 'text', data: TEXT } }),
          task('long', binding, { capability: 'long', input: { source: { from_task: 'up' } } }),
          task('down', 'JSONRPC', {
            capability: 'sentiment-analysis',
            input: { source: { from_task: 'long' } },
          }),
        ],
        edges: [
          { from: 'up', to: 'long' },
          { from: 'long', to: 'down' },
        ],
      };
      const before = await requestsByBinding(hosts()[binding].url);
      const r = runner(dag, { policy: 'best-effort' });
      const done = r.run();
      await long[binding].started(runsBefore + 1);
      r.runner.cancelNode('long');
      const result = await done;
      expect(result.nodes['up']?.state).toBe('completed');
      expect(result.nodes['long']?.state).toBe('cancelled');
      expect(result.nodes['down']?.state).toBe('cancelled');
      await expect.poll(() => long[binding].aborted()).toBe(abortsBefore + 1);
      expect(r.events.some(nodeIs('down', 'running'))).toBe(false);
      // The invoke and its acmp/cancel went over that binding only.
      const after = await requestsByBinding(hosts()[binding].url);
      const grew = Object.keys(after).filter((l) => after[l] !== before[l] && l !== 'http');
      expect(grew).toEqual([LABEL[binding]]);
    },
  );

  it('refuses a binding the provider does not offer before any node is sent', async () => {
    const runsBefore = long.JSONRPC.runs();
    // The HTTP+JSON host serves no gRPC: its card lists no GRPC interface.
    const dag = {
      dag_id: 'dag_no_grpc',
      tasks: [
        task('first', 'JSONRPC', { capability: 'long', input: { type: 'text', data: 'x' } }),
        {
          ...task('second', 'GRPC', { capability: 'sentiment-analysis', input: { type: 'text', data: 'x' } }),
          provider: hosts()['HTTP+JSON'].url,
        },
      ],
      edges: [],
    };
    const error = await runner(dag)
      .run()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DagError);
    expect(error).toMatchObject({
      problems: [
        {
          code: 'DAG_PROVIDER_UNFIT',
          message: `the provider of task "second" at ${hosts()['HTTP+JSON'].url} offers no ACMP over GRPC`,
        },
      ],
    });
    expect(long.JSONRPC.runs()).toBe(runsBefore);
    expect(
      sample(await scrape(hosts()['HTTP+JSON'].url), 'a2a_commerce_requests_total', { binding: 'grpc' }),
    ).toBe(0);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { DagError } from '../../src/acmp/dag/dag-errors.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup } from '../helpers/host.js';
import { aggregate, counted, nodeIs, runner, specDag, splitText, threeHosts } from './dag-helpers.js';

afterEach(cleanup);

const split = counted('text-split', splitText);
const agg = counted('result-aggregation', aggregate);
const slowA = counted('slow', (i) => ({ type: 'json', data: { echo: i.data } }), 150);
const slowB = counted('slow', (i) => ({ type: 'json', data: { echo: i.data } }), 150);
const longC = counted('long', (i) => ({ type: 'json', data: { echo: i.data } }), 10_000);
// Fails after 100 ms: long enough for a sibling's invoke to be running at its provider.
const fails = counted(
  'fails',
  () => {
    throw new Error('boom');
  },
  100,
);
// Three provider hosts shared by the file: every test uses its own run id, so task ids never collide.
const hosts = shared(() =>
  threeHosts([
    [split, slowA],
    [slowB, fails],
    [agg, longC],
  ]),
);

function task(id: string, host: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    task_id: id,
    capability: 'slow',
    input: { type: 'text', data: id },
    max_price_cu: 0.01,
    provider: hosts()[host]?.url,
    ...extra,
  };
}

describe('the Layer 2 §6.2 pipeline across three providers', () => {
  it('splits, runs both sentiments, aggregates in order and verifies every proof', async () => {
    const dag = specDag();
    const [h0, h1, h2] = hosts();
    const at = [h0, h1, h1, h2];
    dag.tasks.forEach((t, i) => Object.assign(t, { max_price_cu: 0.01, provider: at[i]?.url }));
    dag.tasks[0]!.input = {
      type: 'text',
      data: 'Revenue grew strongly and customers are happy. Sales fell badly and margins are terrible.',
    };
    const { run } = runner(dag, { terms: { budgetCu: 0.04 } });
    const result = await run();
    expect(result.state).toBe('completed');
    expect(result.result['task_agg_03']).toEqual({
      type: 'json',
      data: { count: 2, sentiments: ['positive', 'negative'] },
    });
    for (const node of Object.values(result.nodes))
      expect(node.outcome).toMatchObject({ proof: { method: 'result-hash' } });
    expect(result.totalCostCu).toBeGreaterThan(0);
    expect(result.totalCostCu).toBeLessThanOrEqual(0.04);
  });
});

describe('execution', () => {
  it('keeps at most maxParallel nodes in flight at one provider', async () => {
    const before = slowB.runs();
    const dag = { dag_id: 'dag_batch', tasks: ['p1', 'p2', 'p3', 'p4'].map((id) => task(id, 1)), edges: [] };
    const result = await runner(dag, { maxParallel: 2 }).run();
    expect(result.state).toBe('completed');
    expect(slowB.runs() - before).toBe(4);
    expect(slowB.maxConcurrent()).toBe(2);
  });

  it('refuses ceilings above the budget before connecting to anyone', () => {
    const before = slowA.runs();
    const dag = { dag_id: 'dag_money', tasks: [task('m1', 0), task('m2', 0)], edges: [] };
    expect(() => runner(dag, { terms: { budgetCu: 0.015 } })).toThrow(DagError);
    expect(() => runner(dag, { terms: { budgetCu: 0.015 } })).toThrow(/DAG_BUDGET_EXCEEDED/);
    expect(slowA.runs()).toBe(before);
  });
});

describe('cancellation (Layer 2 §4)', () => {
  it('cancels a node and its downstream dependents, sends acmp/cancel, keeps completed upstream results', async () => {
    const abortsBefore = longC.aborted();
    const dag = {
      dag_id: 'dag_cancel',
      tasks: [
        task('up', 0),
        task('long', 2, { capability: 'long', input: { source: { from_task: 'up' } } }),
        task('down', 1, { input: { source: { from_task: 'long' } } }),
        task('side', 1),
      ],
      edges: [
        { from: 'up', to: 'long' },
        { from: 'long', to: 'down' },
      ],
    };
    const r = runner(dag, { policy: 'best-effort' });
    const runsBefore = longC.runs();
    const done = r.run();
    await longC.started(runsBefore + 1);
    r.runner.cancelNode('long');
    const result = await done;
    expect(result.nodes['up']?.state).toBe('completed');
    expect(result.nodes['long']?.state).toBe('cancelled');
    expect(result.nodes['down']).toMatchObject({
      state: 'cancelled',
      outcome: { reason: 'cancelled by the buyer' },
    });
    expect(result.nodes['side']?.state).toBe('completed');
    expect(result.state).toBe('cancelled');
    expect(longC.aborted()).toBe(abortsBefore + 1);
  });

  it('cancelling the whole DAG starts no new node', async () => {
    const before = slowB.runs();
    const abort = new AbortController();
    const dag = {
      dag_id: 'dag_abort',
      tasks: [
        task('long', 2, { capability: 'long' }),
        task('after', 1, { input: { source: { from_task: 'long' } } }),
      ],
      edges: [{ from: 'long', to: 'after' }],
    };
    const r = runner(dag, { signal: abort.signal });
    const done = r.run();
    await r.waitFor(nodeIs('long', 'running'));
    abort.abort();
    const result = await done;
    expect(result.state).toBe('cancelled');
    expect(result.nodes['after']?.state).toBe('cancelled');
    expect(slowB.runs()).toBe(before);
  });
});

describe('a failing node (Layer 2 §4 "When a task fails")', () => {
  const dag = () => ({
    dag_id: 'dag_fail',
    tasks: [
      task('bad', 1, { capability: 'fails' }),
      task('needs', 0, { input: { source: { from_task: 'bad' } } }),
      task('sibling', 2, { capability: 'long' }),
    ],
    edges: [{ from: 'bad', to: 'needs' }],
  });

  it('best-effort: cancels the dependents, lets the sibling finish', async () => {
    const r = runner(dag(), { policy: 'best-effort' });
    const done = r.run();
    await r.waitFor(nodeIs('bad', 'failed'));
    expect(r.events.some(nodeIs('sibling', 'cancelled'))).toBe(false);
    r.runner.cancelNode('sibling');
    const result = await done;
    expect(result.nodes['bad']).toMatchObject({ state: 'failed', outcome: { error: { code: -33099 } } });
    expect(result.nodes['needs']).toMatchObject({
      state: 'cancelled',
      outcome: { reason: 'upstream bad failed' },
    });
    expect(result.state).toBe('failed');
  });

  it('fail-fast: cancels the whole DAG, siblings in flight included', async () => {
    const abortsBefore = longC.aborted();
    const result = await runner(dag(), { policy: 'fail-fast' }).run();
    expect(result.state).toBe('failed');
    expect(result.nodes['sibling']).toMatchObject({
      state: 'cancelled',
      outcome: { reason: 'fail-fast: bad failed' },
    });
    expect(longC.aborted()).toBe(abortsBefore + 1);
  });
});

describe('streaming within DAGs (Layer 2 §5)', () => {
  it('streams the upstream chunks in order and falls back to a literal input at an A2A downstream', async () => {
    const text = 'Revenue grew strongly. Customers are happy. The weather was mild. Margins improved.';
    const dag = {
      dag_id: 'dag_stream',
      tasks: [
        task('sum', 0, { capability: 'summarize', input: { type: 'text', data: text } }),
        task('feel', 1, { capability: 'sentiment-analysis', input: { source: { from_task: 'sum' } } }),
      ],
      edges: [{ from: 'sum', to: 'feel', stream_eligible: true }],
    };
    const r = runner(dag);
    const result = await r.run();
    expect(result.state).toBe('completed');
    expect(r.events).toContainEqual({
      kind: 'fallback',
      from: 'sum',
      to: 'feel',
      reason: 'downstream_no_input_streaming',
    });
    const seqs = r.events.flatMap((e) => (e.kind === 'chunk' && e.nodeId === 'sum' ? [e.params.seq] : []));
    expect(seqs.length).toBeGreaterThan(1);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const summary = result.nodes['sum']?.outcome;
    expect(summary).toMatchObject({ state: 'completed', output: { type: 'text' } });
    expect(result.nodes['feel']?.outcome).toMatchObject({
      state: 'completed',
      output: { type: 'json', data: { sentiment: 'positive' } },
    });
  });
});

import { describe, expect, it } from 'vitest';
import { DagError } from '../../src/acmp/dag/dag-errors.js';
import type { DagBuyerPort } from '../../src/acmp/dag/dag-ports.js';
import { DagRunner } from '../../src/acmp/dag/dag-runner.js';
import { MemoryDagRunStore } from '../../src/storage/memory/dag-run-store-memory.js';

const DAG = {
  dag_id: 'dag_terms',
  tasks: [{ task_id: 'one', capability: 'echo', input: { type: 'text', data: 'x' }, max_price_cu: 0.01 }],
  edges: [],
};

/** A port whose providers cannot be reached: a run that gets past its checks fails its node. */
function unreachable(): DagBuyerPort & { asked: number } {
  const port = {
    asked: 0,
    provider: () => {
      port.asked++;
      return Promise.reject(new Error('unreachable'));
    },
    close: () => Promise.resolve(),
  };
  return port;
}

function runner(store: MemoryDagRunStore, port: DagBuyerPort, terms: Record<string, unknown>) {
  return new DagRunner(DAG, { runId: 'run_terms', store, port, terms });
}

describe('a resumed run keeps its terms (docs/acmp-dag.md "Durability")', () => {
  const first = { budgetCu: 1, defaultProvider: 'https://a.example', defaultBinding: 'JSONRPC' };

  it.each([
    ['budget', { ...first, budgetCu: 2 }],
    ['default provider', { ...first, defaultProvider: 'https://b.example' }],
    ['default binding', { ...first, defaultBinding: 'GRPC' }],
  ])('refuses another %s as DAG_RUN_CONFLICT before reaching any provider', async (_what, other) => {
    const store = new MemoryDagRunStore();
    await runner(store, unreachable(), first)
      .run()
      .catch(() => undefined);
    const port = unreachable();
    const resumed = runner(store, port, other).run();
    const error: unknown = await resumed.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DagError);
    const problems = (error as DagError).problems;
    expect(problems.map((p) => p.code)).toEqual(['DAG_RUN_CONFLICT']);
    expect(problems[0]?.message).toContain('other terms');
    expect(port.asked).toBe(0);
  });

  it('resumes with the same terms, whatever their key order', async () => {
    const store = new MemoryDagRunStore();
    await runner(store, unreachable(), first)
      .run()
      .catch(() => undefined);
    const port = unreachable();
    const reordered = { defaultBinding: 'JSONRPC', defaultProvider: 'https://a.example', budgetCu: 1 };
    await runner(store, port, reordered)
      .run()
      .catch(() => undefined);
    expect(port.asked).toBeGreaterThan(0);
  });
});

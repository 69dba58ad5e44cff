import { expect, it } from 'vitest';
import { MemoryDagRunStore } from '../memory/dag-run-store-memory.js';
import type { DagRunStore } from '../../acmp/dag/dag-ports.js';
import { storeContract } from '../../../test/helpers/store-harness.js';
import { dagMigrations, KyselyDagRunStore } from './dag-run-store-kysely.js';

const params = {
  task_id: 'task_n1',
  capability: 'c',
  input: { type: 'text', data: 'x' },
  max_price_cu: 0.01,
};
const run = {
  runId: 'run_1',
  dagId: 'dag_1',
  dag: '{"dag_id":"dag_1"}',
  terms: '{}',
  nodes: [
    { nodeId: 'a', state: 'pending' as const, taskId: 'task_n1' },
    { nodeId: 'b', state: 'pending' as const, taskId: 'task_n2' },
  ],
};

storeContract<DagRunStore>(
  'DagRunStore',
  {
    memory: () => new MemoryDagRunStore(),
    kysely: (database) => new KyselyDagRunStore(database),
    migrations: [dagMigrations],
  },
  (t) => {
    it('creates a run once, with every node pending in order', async () => {
      expect(await t.store.createRun(run)).toBe('created');
      expect(await t.store.createRun({ ...run, dag: 'other' })).toBe('exists');
      const loaded = await t.store.loadRun('run_1');
      expect(loaded).toMatchObject({
        state: 'running',
        dag: run.dag,
        nodes: [{ nodeId: 'a', state: 'pending' }, { nodeId: 'b' }],
      });
    });

    it('keeps the params of a started node and its outcome, across a reopen', async () => {
      await t.store.createRun(run);
      await t.store.startNode('run_1', { nodeId: 'a', params });
      await t.store.finishNode('run_1', {
        nodeId: 'a',
        outcome: { state: 'completed', output: { type: 'json', data: 1 }, costCu: 0.002 },
      });
      await t.store.finishRun('run_1', 'completed');
      const store = (await t.reopen?.()) ?? t.store;
      const loaded = await store.loadRun('run_1');
      expect(loaded?.state).toBe('completed');
      expect(loaded?.nodes[0]).toEqual({
        nodeId: 'a',
        state: 'completed',
        taskId: 'task_n1',
        params,
        outcome: { state: 'completed', output: { type: 'json', data: 1 }, costCu: 0.002 },
      });
    });

    it('never overwrites a terminal node', async () => {
      await t.store.createRun(run);
      await t.store.finishNode('run_1', { nodeId: 'b', outcome: { state: 'cancelled', reason: 'r' } });
      await t.store.startNode('run_1', { nodeId: 'b', params });
      await t.store.finishNode('run_1', {
        nodeId: 'b',
        outcome: { state: 'failed', error: { code: -33099, message: 'm' } },
      });
      expect((await t.store.loadRun('run_1'))?.nodes[1]).toMatchObject({
        state: 'cancelled',
        outcome: { reason: 'r' },
      });
    });
  },
);

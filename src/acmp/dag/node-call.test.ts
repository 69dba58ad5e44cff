import { describe, expect, it } from 'vitest';
import { DagTaskSchema } from './dag-model.js';
import { nodeParams } from './node-call.js';

describe('a node invoke (docs/acmp-dag.md "The DAG file")', () => {
  it('sends the Task without the buyer-side provider and binding, loose fields kept', () => {
    const task = DagTaskSchema.parse({
      task_id: 'feel',
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'x' },
      max_price_cu: 0.01,
      provider: 'http://127.0.0.1:1',
      binding: 'GRPC',
      x_note: 'kept',
    });
    const params = nodeParams(
      task,
      { taskId: 'task_1', dagId: 'dag_1', input: { type: 'text', data: 'x' } },
      { stream: false },
    );
    expect(params).not.toHaveProperty('provider');
    expect(params).not.toHaveProperty('binding');
    expect(params).toMatchObject({ task_id: 'task_1', x_note: 'kept', metadata: { dag_id: 'dag_1' } });
  });

  it('refuses a binding the buyer does not speak', () => {
    const parsed = DagTaskSchema.safeParse({
      task_id: 'feel',
      capability: 'c',
      input: { type: 'text', data: 'x' },
      binding: 'SOAP',
    });
    expect(parsed.success).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import type { CapabilityObject } from '../wire/messages.js';
import { checkDag, parseDag } from './dag-check.js';
import { planStreaming } from './stream-plan.js';

/** A capability object advertising the given streaming features. */
function caps(features: CapabilityObject['features']): CapabilityObject {
  return { version: '0.1', role: 'provider', accepts: ['acmp/invoke'], emits: [], features };
}

/** up → down over a stream_eligible edge, plus a lone task asking for `stream`. */
function plan(extraTask: Record<string, unknown> = {}) {
  return parseDag({
    dag_id: 'dag_s',
    tasks: [
      { task_id: 'up', capability: 'c', input: { type: 'text', data: 'x' } },
      { task_id: 'down', capability: 'c', input: { source: { from_task: 'up' } }, ...extraTask },
      { task_id: 'lone', capability: 'c', input: { type: 'text', data: 'x' }, stream: true },
    ],
    edges: [{ from: 'up', to: 'down', stream_eligible: true }],
  });
}

describe('streaming within DAGs (Layer 2 §5): the fallback, always', () => {
  it('streams the upstream output and falls back when the downstream has no input_streaming', () => {
    const p = planStreaming(plan(), () => caps({ output_streaming: true }));
    expect([...p.streamed].sort()).toEqual(['lone', 'up']);
    expect(p.fallbacks).toEqual([{ from: 'up', to: 'down', reason: 'downstream_no_input_streaming' }]);
  });

  it('falls back without streaming when the upstream has no output_streaming (§5 step 1)', () => {
    const p = planStreaming(plan(), (id) => (id === 'down' ? caps({ input_streaming: true }) : caps({})));
    expect(p.streamed.size).toBe(0);
    expect(p.fallbacks).toEqual([{ from: 'up', to: 'down', reason: 'upstream_no_output_streaming' }]);
  });

  it('falls back even when both providers could: this buyer sends no acmp/inputChunk', () => {
    const p = planStreaming(plan(), () => caps({ output_streaming: true, input_streaming: true }));
    expect(p.streamed.has('up')).toBe(true);
    expect(p.fallbacks).toEqual([{ from: 'up', to: 'down', reason: 'buyer_sends_no_input_chunks' }]);
  });

  it('refuses a task asking for input_stream: true before anything is spent', () => {
    const checked = checkDag({
      dag_id: 'dag_s',
      tasks: [{ task_id: 'a', capability: 'c', input: { type: 'text', data: 'x' }, input_stream: true }],
      edges: [],
    });
    expect(checked).toMatchObject({
      ok: false,
      problems: [
        {
          code: 'DAG_SCHEMA',
          path: '/tasks/0/input_stream',
          message: expect.stringContaining('sends no acmp/inputChunk') as unknown,
        },
      ],
    });
    expect(() => plan({ input_stream: false })).not.toThrow();
  });
});

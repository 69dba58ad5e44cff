import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkDag, parseDag } from './dag-check.js';
import { DagError } from './dag-errors.js';
import { checkRunTerms, nodeTaskId } from './run-checks.js';

/** The DAG of Layer 2 §3 / §6.2, as the spec prints it. */
const SPEC_DAG = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/dag/spec-3-dag.json', import.meta.url), 'utf8'),
) as { tasks: Record<string, unknown>[]; edges: Record<string, unknown>[] } & Record<string, unknown>;

/** A copy of the spec DAG with changes applied. */
function specDag(change: (dag: typeof SPEC_DAG) => void = () => undefined): typeof SPEC_DAG {
  const dag = structuredClone(SPEC_DAG);
  change(dag);
  return dag;
}

function problemsOf(value: unknown): { code: string; path: string; message: string }[] {
  const checked = checkDag(value);
  return checked.ok ? [] : checked.problems;
}

describe('the Layer 2 §3 example DAG (§6.2)', () => {
  it('is valid, with one root, one leaf and a topological order', () => {
    const plan = parseDag(SPEC_DAG);
    expect(plan.roots).toEqual(['task_split_01']);
    expect(plan.leaves).toEqual(['task_agg_03']);
    expect(plan.order[0]).toBe('task_split_01');
    expect(plan.order.at(-1)).toBe('task_agg_03');
  });

  it('is valid with empty edges when no task references another (a batch, §3)', () => {
    const batch = { dag_id: 'dag_b', tasks: [SPEC_DAG.tasks[0]], edges: [] };
    expect(checkDag(batch).ok).toBe(true);
  });
});

describe('DAG constraints (Layer 2 §3): each refused with its reason', () => {
  it('refuses a cycle, naming it', () => {
    const dag = specDag((d) => d.edges.push({ from: 'task_agg_03', to: 'task_split_01' }));
    const [problem] = problemsOf(dag);
    expect(problem?.code).toBe('DAG_CYCLE');
    expect(problem?.message).toMatch(/: task_sent_02a → task_agg_03 → task_split_01 → task_sent_02a$/);
  });

  it('refuses a self-loop as a cycle', () => {
    const dag = specDag((d) => d.edges.push({ from: 'task_sent_02a', to: 'task_sent_02a' }));
    expect(problemsOf(dag)[0]).toMatchObject({
      code: 'DAG_CYCLE',
      message: expect.stringContaining('task_sent_02a → task_sent_02a') as unknown,
    });
  });

  it('refuses an edge naming a task that does not exist', () => {
    const dag = specDag((d) => d.edges.push({ from: 'task_split_01', to: 'task_ghost' }));
    expect(problemsOf(dag)).toContainEqual(
      expect.objectContaining({ code: 'DAG_UNKNOWN_TASK', path: '/edges/4/to' }),
    );
  });

  it('refuses a from_task without an upstream edge into the referencing task', () => {
    const dag = specDag((d) => d.edges.splice(0, 1));
    expect(problemsOf(dag)).toEqual([
      expect.objectContaining({ code: 'DAG_REFERENCE_WITHOUT_EDGE', path: '/tasks/1/input/source' }),
    ]);
  });

  it('refuses a from_tasks member without an edge', () => {
    const dag = specDag((d) => d.edges.splice(3, 1));
    expect(problemsOf(dag)[0]).toMatchObject({
      code: 'DAG_REFERENCE_WITHOUT_EDGE',
      message: expect.stringContaining('"task_sent_02b" without an edge') as unknown,
    });
  });

  it('refuses a root task with an input reference (roots start with literal input)', () => {
    const dag = specDag((d) => {
      d.tasks[0]!.input = { source: { from_task: 'task_agg_03' } };
    });
    expect(problemsOf(dag)[0]?.code).toBe('DAG_REFERENCE_WITHOUT_EDGE');
  });

  it('refuses a duplicate task_id and a duplicate edge', () => {
    const dag = specDag((d) => {
      d.tasks.push(structuredClone(d.tasks[1]!));
      d.edges.push({ from: 'task_split_01', to: 'task_sent_02a' });
    });
    expect(problemsOf(dag).map((p) => p.code)).toEqual(['DAG_DUPLICATE_TASK', 'DAG_DUPLICATE_EDGE']);
  });

  it('refuses an input that is both literal and a reference (§1.1: mutually exclusive)', () => {
    const dag = specDag((d) => {
      d.tasks[1]!.input = { type: 'text', data: 'x', source: { from_task: 'task_split_01' } };
    });
    expect(problemsOf(dag)[0]?.code).toBe('DAG_SCHEMA');
  });

  it('refuses a source naming both from_task and from_tasks', () => {
    const dag = specDag((d) => {
      d.tasks[3]!.input = { source: { from_task: 'task_sent_02a', from_tasks: ['task_sent_02b'] } };
    });
    expect(problemsOf(dag)[0]).toMatchObject({ code: 'DAG_SCHEMA', path: '/tasks/3/input/source' });
  });

  it.each([['dag_id'], ['tasks'], ['edges']])('refuses a DAG without %s (§3 DAG Schema)', (field) => {
    const dag = specDag((d) => delete d[field]);
    expect(problemsOf(dag)[0]).toMatchObject({ code: 'DAG_SCHEMA', path: `/${field}` });
  });

  it.each([['data.chunks[*]'], ['chunks[0]'], ['data.chunks[0:2]'], ['data..x'], ['data.chunks[-1]']])(
    'refuses the field path %s (outside the v0.1 grammar)',
    (field) => {
      const dag = specDag((d) => {
        d.tasks[1]!.input = { source: { from_task: 'task_split_01', field } };
      });
      expect(problemsOf(dag)[0]).toMatchObject({
        code: 'DAG_FIELD_PATH',
        path: '/tasks/1/input/source/field',
      });
    },
  );

  it('refuses a field sub-selection on a stream_eligible edge (§5), and accepts "data"', () => {
    const streamed = specDag((d) => {
      d.edges[0]!.stream_eligible = true;
    });
    expect(problemsOf(streamed)[0]).toMatchObject({
      code: 'DAG_STREAMED_FIELD',
      path: '/tasks/1/input/source/field',
    });
    const whole = specDag((d) => {
      d.edges[0]!.stream_eligible = true;
      d.tasks[1]!.input = { source: { from_task: 'task_split_01', field: 'data' } };
    });
    expect(checkDag(whole).ok).toBe(true);
  });

  it('throws every problem from parseDag, the first naming the error', () => {
    const dag = specDag((d) => d.edges.splice(0, 2));
    const error = (() => {
      try {
        parseDag(dag);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(DagError);
    expect((error as DagError).problems).toHaveLength(2);
    expect((error as DagError).message).toMatch(/^DAG_REFERENCE_WITHOUT_EDGE at \/tasks\/1\/input\/source: /);
  });
});

describe('run terms (docs/acmp-dag.md "Money")', () => {
  const priced = specDag((d) => {
    for (const t of d.tasks) t.max_price_cu = 0.01;
  });

  it('refuses a run without a budget, a task without a ceiling or a provider', () => {
    const codes = checkRunTerms(parseDag(SPEC_DAG), {}).map((p) => p.code);
    expect(codes).toEqual(
      expect.arrayContaining(['DAG_BUDGET_MISSING', 'DAG_CEILING_MISSING', 'DAG_PROVIDER_MISSING']),
    );
  });

  it('refuses ceilings above the budget, and accepts them at the budget', () => {
    const plan = parseDag(priced);
    const over = checkRunTerms(plan, { budgetCu: 0.039, defaultProvider: 'http://127.0.0.1:1' });
    expect(over).toEqual([
      expect.objectContaining({
        code: 'DAG_BUDGET_EXCEEDED',
        message: expect.stringContaining('0.04 CU, above the budget of 0.039') as unknown,
      }),
    ]);
    expect(checkRunTerms(plan, { budgetCu: 0.04, defaultProvider: 'http://127.0.0.1:1' })).toEqual([]);
  });
});

describe('node task ids', () => {
  it('are deterministic per run and node, distinct across runs, 36 characters', () => {
    const a = nodeTaskId('run_1', 'task_split_01');
    expect(a).toBe(nodeTaskId('run_1', 'task_split_01'));
    expect(a).not.toBe(nodeTaskId('run_2', 'task_split_01'));
    expect(a).toMatch(/^task_[0-9a-f]{31}$/);
  });
});

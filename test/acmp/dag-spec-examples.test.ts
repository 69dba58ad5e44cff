import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDag } from '../../src/acmp/dag/dag-check.js';
import { resolveInput } from '../../src/acmp/dag/resolve-input.js';
import { parseInvokeParams } from '../../src/acmp/wire/messages.js';
import { AcmpResultSchema, type Payload } from '../../src/acmp/wire/task-messages.js';
import { verifyProof } from '../../src/acmp/wire/proof.js';

/** A JSON-RPC message of Layer 2 §6.1, as the spec prints it (test/fixtures/dag/). */
function fixture(name: string): { params?: unknown; result?: unknown } {
  return JSON.parse(readFileSync(new URL(`../fixtures/dag/${name}`, import.meta.url), 'utf8')) as {
    params?: unknown;
    result?: unknown;
  };
}

describe('Layer 2 §6.1 example payloads', () => {
  const invoke = parseInvokeParams(fixture('spec-6.1-invoke.json').params);
  const result = AcmpResultSchema.parse(fixture('spec-6.1-result.json').result);

  it('the invoke parses through our wire model with every field the spec shows', () => {
    expect(invoke).toMatchObject({
      task_id: 'task_sa_001',
      capability: 'sentiment-analysis',
      input: { type: 'text' },
      output_type: 'json',
      input_tokens_est: 120,
      max_price_cu: 0.005,
      preferred_tier: 'B',
      timeout_ms: 800,
      escrow_id: 'esc_a3f9c2',
      proof_method: 'result-hash',
    });
  });

  it('the result parses and answers the same task within the ceiling', () => {
    expect(result.task_id).toBe(invoke.task_id);
    expect(result.cost_cu).toBeLessThanOrEqual(invoke.max_price_cu ?? 0);
    expect(result.output).toMatchObject({ type: 'json', data: { sentiment: 'mixed' } });
  });

  it('the invoke is a Layer 2 Task: a DAG of it plus a referencing task is valid', () => {
    const { task_id, capability, input, output_type } = invoke;
    const plan = parseDag({
      dag_id: 'dag_spec_61',
      tasks: [
        { task_id, capability, input, output_type, max_price_cu: invoke.max_price_cu },
        {
          task_id: 'task_margins',
          capability: 'summarize',
          input: { source: { from_task: task_id, field: 'data.aspects[1].sentiment' } },
          max_price_cu: 0.005,
        },
      ],
      edges: [{ from: task_id, to: 'task_margins' }],
    });
    expect(plan.leaves).toEqual(['task_margins']);
  });

  it("the result's output resolves as §3 references describe (whole output, a field, an ordered array)", () => {
    const outputs = new Map<string, Payload>([[result.task_id, result.output as Payload]]);
    const at = { taskId: 'task_next' };
    expect(resolveInput({ source: { from_task: 'task_sa_001' } }, outputs, at)).toEqual(result.output);
    expect(
      resolveInput({ source: { from_task: 'task_sa_001', field: 'data.aspects[1].sentiment' } }, outputs, at),
    ).toEqual({ type: 'text', data: 'negative' });
    expect(
      resolveInput({ source: { from_task: 'task_sa_001', field: 'data.aspects[0]' } }, outputs, at),
    ).toEqual({ type: 'json', data: { topic: 'revenue', sentiment: 'positive', confidence: 0.95 } });
    expect(
      resolveInput({ source: { from_tasks: ['task_sa_001'], field: 'data.confidence' } }, outputs, at),
    ).toEqual({ type: 'json', data: [0.87] });
  });

  it("the example's placeholder hash does not verify, so the runner would not feed that output on", () => {
    const check = verifyProof(result.proof, {
      method: 'result-hash',
      output: result.output as Payload,
      input: invoke.input,
    });
    expect(check).toEqual({ ok: false, reason: 'hash_mismatch' });
  });
});

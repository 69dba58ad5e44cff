import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildInvokeParams } from '../../../test/helpers/acmp-testing.js';
import { BuyerCall, prepareInvokeParams } from './buyer-call.js';
import { ACMP_METHOD } from '../wire/constants.js';
import type { AcmpError } from '../wire/errors.js';
import { buildCapabilityObject } from '../wire/capability-object.js';

const ids = { newId: (prefix: string) => `${prefix}_1` };
const input = { capability: 'echo', input: { type: 'text', data: 'hi' } };
const text = (data: string) => ({ type: 'text', data });

function thrown(run: () => unknown): AcmpError {
  try {
    run();
  } catch (error) {
    return error as AcmpError;
  }
  throw new Error('expected a throw');
}

afterEach(() => {
  vi.useRealTimers();
});

describe('prepareInvokeParams (Layer 1 §1: nothing unadvertised is relied on)', () => {
  it('generates a task_id when the input has none', () => {
    const params = prepareInvokeParams(buildCapabilityObject(true, 5000), input, ids);
    expect(params.task_id).toBe('task_1');
  });

  it('refuses stream: true without output_streaming with -33007 before anything is sent', () => {
    const error = thrown(() =>
      prepareInvokeParams(buildCapabilityObject(false, 5000), { ...input, stream: true }, ids),
    );
    expect(error.code).toBe(-33007);
    expect(error.data).toMatchObject({ feature: 'output_streaming' });
  });

  it('refuses an invoke the provider does not accept with -33007', () => {
    const capability = { ...buildCapabilityObject(true, 5000), accepts: [ACMP_METHOD.cancel] };
    expect(thrown(() => prepareInvokeParams(capability, input, ids)).data).toMatchObject({
      feature: ACMP_METHOD.invoke,
    });
  });

  it('refuses params the schema refuses with -32602', () => {
    const bad = { ...input, timeout_ms: -1 };
    expect(thrown(() => prepareInvokeParams(buildCapabilityObject(true, 5000), bad, ids)).code).toBe(-32602);
  });
});

describe('BuyerCall.receive (Layer 1 §3.5, §3.6)', () => {
  it('passes a heartbeat on and counts it as a sign of life when liveness is watched', () => {
    const call = new BuyerCall(buildInvokeParams(), { livenessMs: 1000 });
    expect(call.livenessDecides).toBe(false);
    const heartbeat = { kind: 'heartbeat' as const, params: { task_id: call.taskId } };
    expect(call.receive(heartbeat)).toBe(heartbeat);
    expect(call.livenessDecides).toBe(true);
    call.dispose();
  });

  it('stops the liveness window on each sign of life and starts it again once the event is delivered', () => {
    vi.useFakeTimers();
    const call = new BuyerCall(buildInvokeParams(), { livenessMs: 1000 });
    vi.advanceTimersByTime(900);
    const event = call.receive({ kind: 'heartbeat', params: { task_id: call.taskId } });
    vi.advanceTimersByTime(5_000);
    expect(call.signal.aborted).toBe(false);
    const delivery = call.deliver(event);
    expect(delivery.next().value).toMatchObject({ kind: 'heartbeat' });
    vi.advanceTimersByTime(5_000);
    expect(call.signal.aborted).toBe(false);
    expect(delivery.next().done).toBe(true);
    vi.advanceTimersByTime(900);
    expect(call.signal.aborted).toBe(false);
    vi.advanceTimersByTime(200);
    expect(call.signal.reason).toMatchObject({ code: -33003, data: { reason: 'liveness' } });
    call.dispose();
  });

  it('refuses a chunk of a call that did not ask to stream (-33099 unrequested_chunk)', () => {
    const call = new BuyerCall(buildInvokeParams(), { livenessMs: undefined });
    const chunk = { kind: 'chunk' as const, params: { task_id: call.taskId, seq: 0, chunk: text('x') } };
    expect(thrown(() => call.receive(chunk)).data).toMatchObject({ reason: 'unrequested_chunk' });
    call.dispose();
  });

  it('throws the provider error as an AcmpError', () => {
    const call = new BuyerCall(buildInvokeParams(), { livenessMs: undefined });
    const error = { code: -33002, message: 'Capability not found', data: { task_id: call.taskId } };
    expect(thrown(() => call.receive({ kind: 'error', error })).code).toBe(-33002);
    call.dispose();
  });

  it('yields the result with the output the chunks reassemble', () => {
    const call = new BuyerCall(buildInvokeParams({ stream: true }), { livenessMs: undefined });
    const taskId = call.taskId;
    call.receive({ kind: 'chunk', params: { task_id: taskId, seq: 0, chunk: text('a'), final: false } });
    call.receive({ kind: 'chunk', params: { task_id: taskId, seq: 1, chunk: text('b'), final: true } });
    const result = { task_id: taskId, output_streamed: true, tokens_used: 1, cost_cu: 0 };
    const event = call.receive({ kind: 'result', result });
    expect(event).toMatchObject({ kind: 'result', output: { type: 'text', data: 'ab' } });
    call.dispose();
  });
});

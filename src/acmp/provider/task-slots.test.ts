import { describe, expect, it } from 'vitest';
import { collect } from '../../../test/helpers/acmp-testing.js';
import { systemClock } from '../../shared/clock.js';
import { silentLogger } from '../../shared/logger.js';
import { MemoryAcmpTaskStore } from './memory-task-store.js';
import { attachToSlot, TaskSlots } from './task-slots.js';
import type { AcmpTaskRecord, TaskScope } from './task-store.js';

const owner: TaskScope = { tenant: 't', agent: 'agent:owner' };
const other: TaskScope = { tenant: 't', agent: 'agent:other' };
const result = { task_id: 'task_1', output: { type: 'text', data: 'done' }, tokens_used: 1, cost_cu: 0 };

async function storedTask(finished: boolean) {
  const store = new MemoryAcmpTaskStore();
  const task = {
    taskId: 'task_1',
    scope: owner,
    paramsHash: 'hash-1',
    contextId: 'ctx',
    request: '',
    hostId: 'host-a',
    createdAt: 1000,
    deadlineAt: 60_000,
  };
  await store.claim(task);
  if (finished)
    await store.finish('task_1', { outcome: { kind: 'result', result }, end: 'completed', at: 2000 });
  const record = (await store.get('task_1')) as AcmpTaskRecord;
  const slots = new TaskSlots({
    store,
    clock: systemClock,
    logger: silentLogger,
    fallbackMs: 50,
    heartbeats: false,
  });
  return { store, record, slots };
}

describe('TaskSlots.slotFor (docs/acmp-core.md "Claim rules")', () => {
  it("refuses another caller's task as in use, without revealing it", async () => {
    const { record, slots } = await storedTask(true);
    const slot = await slots.slotFor(record, other, 'hash-1');
    expect(slot).toMatchObject({ kind: 'refusal', scope: other, error: { code: -32602 } });
    expect(slot.kind === 'refusal' && (slot.error as { data: unknown }).data).toMatchObject({
      detail: 'task_id is already in use',
    });
  });

  it('refuses the same caller with other params as a reused task_id (Layer 1 §3.1.1)', async () => {
    const { record, slots } = await storedTask(true);
    const slot = await slots.slotFor(record, owner, 'hash-2');
    expect(slot.kind === 'refusal' && (slot.error as { data: unknown }).data).toMatchObject({
      detail: 'task_id already used with different params',
    });
  });

  it('replays a finished task with its stored result', async () => {
    const { record, slots } = await storedTask(true);
    const slot = await slots.slotFor(record, owner, 'hash-1');
    if (slot.kind !== 'task') throw new Error('expected a task slot');
    const admission = attachToSlot(slot, { canStream: false, stream: false });
    if (admission.kind !== 'task') throw new Error('expected a task admission');
    expect(await collect(admission.events)).toMatchObject([
      { kind: 'result', result: { output_streamed: false } },
    ]);
  });

  it('follows a task running on another host until its outcome is stored', async () => {
    const { store, record, slots } = await storedTask(false);
    const slot = await slots.slotFor(record, owner, 'hash-1');
    if (slot.kind !== 'task') throw new Error('expected a task slot');
    const admission = attachToSlot(slot, { canStream: false, stream: false });
    if (admission.kind !== 'task') throw new Error('expected a task admission');
    const events = collect(admission.events);
    await store.finish('task_1', { outcome: { kind: 'result', result }, end: 'completed', at: 2000 });
    expect(await events).toMatchObject([{ kind: 'result', result: { output: { data: 'done' } } }]);
    await slots.stop(-33099);
  });
});

describe('TaskSlots.enter (Layer 1 §3.1.1)', () => {
  it('keeps the entry while it resolves and forgets a refusal once settled', async () => {
    const { slots } = await storedTask(true);
    let resolutions = 0;
    const refusal = () => {
      resolutions += 1;
      return Promise.resolve({ kind: 'refusal' as const, scope: owner, hash: 'h', error: new Error('no') });
    };
    const first = slots.enter('task_9', refusal);
    expect(slots.entry('task_9')).toBe(first);
    await first;
    await Promise.resolve();
    expect(slots.entry('task_9')).toBeUndefined();
    expect(resolutions).toBe(1);
  });
});

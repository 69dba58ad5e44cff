import { afterEach, describe, expect, it, vi } from 'vitest';
import { PRUNED_TASK_REASON } from '../../src/acmp/provider/pruned-task.js';
import { cleanup, tempDir } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { byKind, DAY, pruner, rowCounts, seedFinishedTasks, taskRow } from '../helpers/retention.js';
import {
  acmpHost,
  acmpMessage,
  callRaw,
  countingCapability,
  invokeRoot,
  replyError,
  replyRoot,
  sendRaw,
} from '../acmp/helpers.js';

afterEach(cleanup);

const VARIANTS = [
  {
    name: 'SQLite',
    pg: false,
    flags: (): Promise<Record<string, string>> => Promise.resolve({ 'data-dir': tempDir() }),
  },
  { name: 'PostgreSQL', pg: true, flags: async () => ({ db: await freshPgDatabase() }) },
].filter((v) => !v.pg || process.env.TEST_PG_URL);

function invokeOf(taskId: string, data = 'once'): ReturnType<typeof invokeRoot> {
  return invokeRoot({
    task_id: taskId,
    capability: 'count-runs',
    input: { type: 'text', data },
    max_price_cu: 0.01,
  });
}

describe.each(VARIANTS)('a pruned task id on a host ($name; Layer 1 §3.1.1)', ({ flags }) => {
  it('is answered with -32602 task_pruned on a retry, never run again', async () => {
    const counting = countingCapability();
    const host = await acmpHost({ capabilities: [counting], flags: await flags(), migrate: true });
    const taskId = `task-pruned-${crypto.randomUUID()}`;
    const first = await sendRaw(host, acmpMessage(invokeOf(taskId)));
    expect(replyRoot(first)?.acmp_result).toBeDefined();
    if (!host.database) throw new Error('the host has a database');
    const later = Date.now() + 8 * DAY;
    expect(byKind((await pruner(host.database, { now: later }).prune({ wait: true })).counts)).toMatchObject({
      task_results: 1,
    });

    const retry = await sendRaw(host, acmpMessage(invokeOf(taskId)));
    expect(replyError(retry)).toMatchObject({ code: -32602, data: { reason: PRUNED_TASK_REASON } });
    const other = await sendRaw(host, acmpMessage(invokeOf(taskId, 'other params')));
    expect(replyError(other)).toMatchObject({
      code: -32602,
      data: { detail: 'task_id already used with different params' },
    });
    expect(counting.runs()).toBe(1);
    const view = await callRaw(host, 'GetTask', taskId);
    expect(view.result?.status?.message?.parts[0]?.data?.acmp_error).toMatchObject({ code: -32602 });
  });

  it('forgotten after the ids age: the id is free again (the documented end of the idempotency window)', async () => {
    const counting = countingCapability();
    const host = await acmpHost({ capabilities: [counting], flags: await flags(), migrate: true });
    const taskId = `task-forgotten-${crypto.randomUUID()}`;
    await sendRaw(host, acmpMessage(invokeOf(taskId)));
    if (!host.database) throw new Error('the host has a database');
    await pruner(host.database, { now: Date.now() + 8 * DAY }).prune({ wait: true });
    await pruner(host.database, { now: Date.now() + 40 * DAY }).prune({ wait: true });
    expect(await taskRow(host.database, taskId)).toBeUndefined();
    expect(replyRoot(await sendRaw(host, acmpMessage(invokeOf(taskId))))?.acmp_result).toBeDefined();
    expect(counting.runs()).toBe(2);
  });

  it('serves invokes while a pruner works through a backlog: every invoke succeeds', async () => {
    const counting = countingCapability('count-runs', 1);
    const host = await acmpHost({ capabilities: [counting], flags: await flags(), migrate: true });
    if (!host.database) throw new Error('the host has a database');
    await seedFinishedTasks(host.database, {
      prefix: 'backlog',
      count: 1200,
      chunks: 3,
      at: Date.now() - 30 * DAY,
    });
    const pass = pruner(host.database, { now: Date.now(), batching: { batchSize: 50, pauseMs: 0 } }).prune({
      wait: true,
    });
    // Fewer at once than the host's cap of running tasks per caller (32): a slow machine runs them all
    // concurrently, and the cap, not the pruner, would refuse the rest.
    const replies = await Promise.all(
      Array.from({ length: 30 }, () =>
        sendRaw(host, acmpMessage(invokeOf(`task-live-${crypto.randomUUID()}`))),
      ),
    );
    expect(replies.map((r) => (replyRoot(r)?.acmp_result ? 'result' : JSON.stringify(r)))).toEqual(
      replies.map(() => 'result'),
    );
    expect(byKind((await pass).counts)).toMatchObject({ task_results: 1200, task_chunks: 3600 });
    expect((await rowCounts(host.database)).acmp_task_chunks).toBe(0);
  });

  it('prunes in the background on its interval', async () => {
    const host = await acmpHost({
      capabilities: [countingCapability()],
      flags: { ...(await flags()), 'prune-interval': '1s', 'prune-pause': '0ms' },
      migrate: true,
    });
    if (!host.database) throw new Error('the host has a database');
    const database = host.database;
    await seedFinishedTasks(database, { prefix: 'bg', count: 5, chunks: 1, at: Date.now() - 8 * DAY });
    await vi.waitFor(async () => expect((await taskRow(database, 'bg-4'))?.request).toBe(''), {
      timeout: 10_000,
      interval: 100,
    });
  });
});

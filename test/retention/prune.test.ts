import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { PRUNED_TASK_OUTCOME } from '../../src/acmp/provider/pruned-task.js';
import { cleanup } from '../helpers/cleanup.js';
import {
  byKind,
  DAY,
  migratedDatabase,
  NOW,
  pruner,
  RETENTION_VARIANTS,
  rowCounts,
  seedReservation,
  seedFinishedTasks,
  seedSdkTask,
  seedSession,
  seedTask,
  taskRow,
} from '../helpers/retention.js';

afterEach(cleanup);

/** The tables retention may change; every other table must keep every row. */
const PRUNED_TABLES = [
  'acmp_tasks',
  'acmp_task_chunks',
  'acmp_sessions',
  'tasks',
  'push_notification_configs',
];

function without(counts: Record<string, number>, tables: readonly string[]): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).filter(([name]) => !tables.includes(name)));
}

describe.each(RETENTION_VARIANTS)('retention on $name', ({ url }) => {
  it('prunes the results and chunks of old finished tasks, keeping each id; recent and running tasks stay', async () => {
    const database = await migratedDatabase(await url());
    await seedTask(database, { id: 'old-1', at: NOW - 8 * DAY, chunks: 7 });
    await seedTask(database, { id: 'old-2', at: NOW - 9 * DAY });
    await seedTask(database, { id: 'recent', at: NOW - 6 * DAY, chunks: 2 });
    await seedTask(database, { id: 'running', at: NOW - 20 * DAY, chunks: 4, running: true });
    const run = await pruner(database).prune();
    expect(run.ran).toBe(true);
    expect(byKind(run.counts)).toMatchObject({ task_results: 2, task_chunks: 7, task_ids: 0 });
    const old = await taskRow(database, 'old-1');
    expect(old).toMatchObject({ state: 'finished', request: '' });
    expect(JSON.parse(old?.outcome ?? 'null')).toEqual(PRUNED_TASK_OUTCOME);
    expect(Number(old?.pruned_at)).toBe(NOW);
    expect((await taskRow(database, 'recent'))?.pruned_at).toBeNull();
    expect(await taskRow(database, 'running')).toMatchObject({ state: 'running', pruned_at: null });
    const counts = await rowCounts(database);
    expect(counts.acmp_task_chunks).toBe(6);
    expect(counts.acmp_tasks).toBe(4);
  });

  it('forgets a pruned task id once it is older than the ids age', async () => {
    const database = await migratedDatabase(await url());
    await seedTask(database, { id: 'ancient', at: NOW - 40 * DAY });
    await seedTask(database, { id: 'old', at: NOW - 10 * DAY });
    await pruner(database, { now: NOW - 31 * DAY + 1 }).prune();
    expect(byKind((await pruner(database).prune()).counts)).toMatchObject({ task_results: 1, task_ids: 1 });
    expect(await taskRow(database, 'ancient')).toBeUndefined();
    expect(await taskRow(database, 'old')).toMatchObject({ request: '' });
  });

  it('keeps a task whose escrow is not settled, prunes one whose escrow is, and never touches escrow rows', async () => {
    const database = await migratedDatabase(await url());
    await seedTask(database, { id: 'held', at: NOW - 30 * DAY });
    await seedTask(database, { id: 'paid', at: NOW - 30 * DAY });
    await seedReservation(database, { escrowId: 'esc-held', taskId: 'held', state: 'reserved' });
    await seedReservation(database, { escrowId: 'esc-paid', taskId: 'paid', state: 'settled' });
    const before = await rowCounts(database);
    expect(byKind((await pruner(database).prune()).counts)).toMatchObject({ task_results: 1 });
    expect((await taskRow(database, 'held'))?.pruned_at).toBeNull();
    expect((await taskRow(database, 'paid'))?.request).toBe('');
    expect(without(await rowCounts(database), PRUNED_TABLES)).toEqual(without(before, PRUNED_TABLES));
    expect(before.acmp_escrow_reservations).toBe(2);
  });

  it('deletes ended sessions past their age; open and recent ones stay', async () => {
    const database = await migratedDatabase(await url());
    for (const phase of ['accepted', 'expired', 'canceled'] as const)
      await seedSession(database, { id: `old-${phase}`, phase, at: NOW - 8 * DAY });
    await seedSession(database, { id: 'old-open', phase: 'offer', at: NOW - 30 * DAY });
    await seedSession(database, { id: 'recent', phase: 'accepted', at: NOW - DAY });
    expect(byKind((await pruner(database).prune()).counts)).toMatchObject({ sessions: 3 });
    expect((await rowCounts(database)).acmp_sessions).toBe(2);
  });

  it("deletes the SDK's ended tasks with their push configs; interrupted and recent ones stay", async () => {
    const database = await migratedDatabase(await url());
    await seedSdkTask(database, { id: 'done', state: 'TASK_STATE_COMPLETED', at: NOW - 8 * DAY, configs: 2 });
    await seedSdkTask(database, { id: 'failed', state: 'TASK_STATE_FAILED', at: NOW - 8 * DAY });
    await seedSdkTask(database, {
      id: 'waiting',
      state: 'TASK_STATE_INPUT_REQUIRED',
      at: NOW - 30 * DAY,
      configs: 1,
    });
    await seedSdkTask(database, { id: 'recent', state: 'TASK_STATE_COMPLETED', at: NOW - DAY, configs: 1 });
    expect(byKind((await pruner(database).prune()).counts)).toMatchObject({
      a2a_tasks: 2,
      a2a_push_configs: 2,
    });
    const counts = await rowCounts(database);
    expect([counts.tasks, counts.push_notification_configs]).toEqual([2, 2]);
  });

  it('a dry run reports exactly what the prune then removes, and removes nothing', async () => {
    const database = await migratedDatabase(await url());
    for (let i = 0; i < 5; i++)
      await seedTask(database, { id: `t-${i}`, at: NOW - (8 + i) * DAY, chunks: i });
    await seedTask(database, { id: 'gone', at: NOW - 60 * DAY });
    await pruner(database, { now: NOW - 40 * DAY }).prune();
    await seedSession(database, { id: 's', phase: 'expired', at: NOW - 8 * DAY });
    await seedSdkTask(database, { id: 'a', state: 'TASK_STATE_CANCELED', at: NOW - 8 * DAY, configs: 3 });
    const before = await rowCounts(database);
    const planned = await pruner(database).plan();
    expect(await rowCounts(database)).toEqual(before);
    expect(byKind(planned)).toEqual({
      task_results: 5,
      task_chunks: 10,
      task_ids: 1,
      sessions: 1,
      a2a_tasks: 1,
      a2a_push_configs: 3,
    });
    expect((await pruner(database).prune()).counts).toEqual(planned);
  });

  it('prunes nothing of a kind whose age is off', async () => {
    const database = await migratedDatabase(await url());
    await seedTask(database, { id: 'old', at: NOW - 80 * DAY });
    await seedSession(database, { id: 's', phase: 'expired', at: NOW - 80 * DAY });
    const ages = { tasksMs: null, taskIdsMs: null, sessionsMs: null };
    expect((await pruner(database, { ages }).prune()).counts).toEqual([]);
    expect((await taskRow(database, 'old'))?.pruned_at).toBeNull();
  });

  it('stopped halfway, leaves no pruned task with chunks; the next pass finishes the work', async () => {
    const database = await migratedDatabase(await url());
    await seedFinishedTasks(database, { prefix: 'old', count: 12, chunks: 5, at: NOW - 8 * DAY });
    const stop = new AbortController();
    const slow = { batchSize: 3, pauseMs: 15, maxWorkShare: 1 };
    const first = pruner(database, { batching: slow }).prune({ signal: stop.signal, wait: true });
    setTimeout(() => stop.abort(), 40);
    const partial = byKind((await first).counts);
    expect(partial.task_results).toBeLessThan(12);
    const { rows } = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM acmp_task_chunks c
      JOIN acmp_tasks t ON t.task_id = c.task_id WHERE t.pruned_at IS NOT NULL`.execute(database.db);
    expect(Number(rows[0]?.n)).toBe(0);
    const rest = byKind((await pruner(database).prune()).counts);
    expect((partial.task_results ?? 0) + (rest.task_results ?? 0)).toBe(12);
    expect((partial.task_chunks ?? 0) + (rest.task_chunks ?? 0)).toBe(60);
  });
});

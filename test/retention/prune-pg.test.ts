import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../helpers/cleanup.js';
import { freshPgDatabase } from '../helpers/pg.js';
import {
  byKind,
  DAY,
  migratedDatabase,
  NOW,
  pruner,
  rowCounts,
  seedFinishedTasks,
} from '../helpers/retention.js';

afterEach(cleanup);

describe.skipIf(!process.env.TEST_PG_URL)('pruners on one PostgreSQL database (one at a time)', () => {
  it('runs one pass at a time: a second pruner skips while the first holds the lock, nothing is removed twice', async () => {
    const url = await freshPgDatabase();
    const [a, b] = [await migratedDatabase(url), await migratedDatabase(url)];
    await seedFinishedTasks(a, { prefix: 'old', count: 30, chunks: 2, at: NOW - 8 * DAY });
    const slow = { batchSize: 2, pauseMs: 20, maxWorkShare: 1 };
    const runs = await Promise.all([
      pruner(a, { batching: slow }).prune(),
      pruner(b, { batching: slow }).prune(),
    ]);
    expect(runs.map((r) => r.ran).sort()).toEqual([false, true]);
    const done = runs.find((r) => r.ran);
    expect(byKind(done?.counts ?? [])).toMatchObject({ task_results: 30, task_chunks: 60 });
    expect((await rowCounts(a)).acmp_task_chunks).toBe(0);
  });

  it('a pruner told to wait runs after the holder, without deadlock, and finds nothing left', async () => {
    const url = await freshPgDatabase();
    const [a, b] = [await migratedDatabase(url), await migratedDatabase(url)];
    await seedFinishedTasks(a, { prefix: 'old', count: 20, chunks: 1, at: NOW - 8 * DAY });
    const slow = { batchSize: 2, pauseMs: 10, maxWorkShare: 1 };
    const runs = await Promise.all([
      pruner(a, { batching: slow }).prune({ wait: true }),
      pruner(b, { batching: slow }).prune({ wait: true }),
    ]);
    expect(runs.map((r) => r.ran)).toEqual([true, true]);
    const removed = runs.map((r) => byKind(r.counts).task_results ?? -1);
    expect(removed.sort((x, y) => x - y)).toEqual([0, 20]);
  });
});

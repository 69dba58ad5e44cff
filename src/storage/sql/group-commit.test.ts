import { describe, expect, it } from 'vitest';
import { GroupCommitter } from './group-commit.js';

type Item = { key: string; n: number };

function recording(fail?: (batch: readonly Item[]) => boolean): {
  committer: GroupCommitter<Item, number>;
  batches: number[][];
} {
  const batches: number[][] = [];
  const committer = new GroupCommitter<Item, number>(
    (batch) => {
      batches.push(batch.map((i) => i.n));
      if (fail?.(batch)) return Promise.reject(new Error('batch failed'));
      return Promise.resolve(batch.map((i) => i.n * 10));
    },
    (item) => item.key,
    { maxBatch: 3, lanes: 1 },
  );
  return { committer, batches };
}

describe('GroupCommitter (docs/acpspec-core.md "Ingest path": group commit)', () => {
  it('writes what was submitted in one turn together, up to maxBatch, and answers each item', async () => {
    const { committer, batches } = recording();
    const results = await Promise.all([1, 2, 3, 4].map((n) => committer.submit({ key: `k${n}`, n })));
    expect(results).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('never puts two items of one key in a batch, nor in two batches at once', async () => {
    const { committer, batches } = recording();
    await Promise.all(
      [
        { key: 'a', n: 1 },
        { key: 'a', n: 2 },
        { key: 'b', n: 3 },
      ].map((i) => committer.submit(i)),
    );
    expect(batches).toEqual([[1, 3], [2]]);
  });

  it('writes the items of a failed batch one by one, so only the bad one fails', async () => {
    const { committer, batches } = recording((batch) => batch.some((i) => i.n === 2));
    const results = await Promise.all(
      [1, 2, 3].map((n) => committer.submit({ key: `k${n}`, n }).catch((e: Error) => e.message)),
    );
    expect(results).toEqual([10, 'batch failed', 30]);
    expect(batches).toEqual([[1, 2, 3], [1], [2], [3]]);
    expect(committer.stats).toMatchObject({ queued: 0, lanesBusy: 0, batches: 1, items: 3 });
  });
});

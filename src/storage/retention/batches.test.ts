import { describe, expect, it } from 'vitest';
import { pauseAfter } from './batches.js';

describe('the pause between prune statements (docs/operations.md "Retention")', () => {
  const batching = { batchSize: 500, pauseMs: 100 };

  it('is the configured pause after a quick statement', () => {
    expect(pauseAfter(0, batching)).toBe(100);
    expect(pauseAfter(5, batching)).toBe(100);
  });

  it('grows with a slow statement, so pruning takes at most 1/20 of the time', () => {
    expect(pauseAfter(96, batching)).toBe(1824);
    const spent = 40;
    const paused = pauseAfter(spent, batching);
    expect(spent / (spent + paused)).toBeLessThanOrEqual(1 / 20);
  });

  it('is the configured pause alone with a work share of 1', () => {
    expect(pauseAfter(96, { ...batching, maxWorkShare: 1 })).toBe(100);
  });

  it('stays zero when the operator turned the pause off', () => {
    expect(pauseAfter(500, { batchSize: 500, pauseMs: 0 })).toBe(0);
  });
});

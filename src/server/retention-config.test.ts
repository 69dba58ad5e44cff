import { describe, expect, it } from 'vitest';
import { resolveHostConfig } from './config.js';
import { DEFAULT_RETENTION, parseAge, resolveRetention } from './retention-config.js';

const DAY = 86_400_000;

describe('retention settings (docs/operations.md "Retention")', () => {
  it('defaults to results and sessions 7 days, task ids 30 days, a pass every 10 minutes, 500 rows a statement', () => {
    expect(resolveRetention({}, {})).toEqual(DEFAULT_RETENTION);
    expect(resolveHostConfig({ 'no-tls': true }, {}).retention).toEqual({
      ages: { tasksMs: 7 * DAY, taskIdsMs: 30 * DAY, sessionsMs: 7 * DAY },
      batching: { batchSize: 500, pauseMs: 100 },
      intervalMs: 600_000,
    });
  });

  it('takes a flag over its variable, and off for an age or the interval', () => {
    const retention = resolveRetention(
      { 'retain-tasks': '36h', 'prune-interval': 'off' },
      {
        A2AC_RETAIN_TASKS: '2d',
        A2AC_RETAIN_SESSIONS: 'off',
        A2AC_PRUNE_BATCH: '50',
        A2AC_PRUNE_PAUSE: '0ms',
      },
    );
    expect(retention).toEqual({
      ages: { tasksMs: 36 * 3_600_000, taskIdsMs: 30 * DAY, sessionsMs: null },
      batching: { batchSize: 50, pauseMs: 0 },
      intervalMs: null,
    });
  });

  it.each([
    [{ 'retain-tasks': '7' }, /--retain-tasks must be a duration like 7d/],
    [{ 'retain-tasks': '30m' }, /--retain-tasks must be between 1h and 3650d, got "30m"/],
    [{ 'prune-batch': '0' }, /--prune-batch must be a whole number from 1 to 10000/],
    [{ 'prune-pause': '2m' }, /--prune-pause must be between 0ms and 1m/],
    [{ 'prune-interval': '10ms' }, /--prune-interval must be between 1s and 1d/],
  ])('refuses %j with CONFIG_INVALID naming the flag', (flags, message) => {
    let thrown: unknown;
    try {
      resolveRetention(flags, {});
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'CONFIG_INVALID' });
    expect((thrown as Error).message).toMatch(message);
  });

  it('keeps task ids forever when their age is off, whatever the results age', () => {
    expect(resolveRetention({ 'retain-task-ids': 'off', 'retain-tasks': '90d' }, {}).ages).toMatchObject({
      tasksMs: 90 * DAY,
      taskIdsMs: null,
    });
    expect(parseAge('--retain-tasks', 'never')).toBeNull();
  });
});

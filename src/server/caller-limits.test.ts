import { describe, expect, it } from 'vitest';
import { DEFAULT_CALLER_LIMITS, resolveCallerLimits } from './caller-limits.js';
import { resolveHostConfig } from './config.js';
import { errorCode } from '../shared/errors.js';

describe('caller limits (docs/host.md "Limits per caller")', () => {
  it('defaults to 8 open sessions, 32 running tasks and 600 requests a minute per caller', () => {
    expect(resolveHostConfig({}, {}).limits).toEqual({
      maxOpenSessions: 8,
      maxRunningTasks: 32,
      rate: { requests: 600, windowMs: 60_000 },
    });
    expect(resolveCallerLimits({}, {})).toEqual(DEFAULT_CALLER_LIMITS);
  });

  it('takes each limit from its flag before its variable', () => {
    const env = {
      A2AC_MAX_OPEN_SESSIONS: '3',
      A2AC_MAX_RUNNING_TASKS: '4',
      A2AC_RATE_LIMIT: '50',
      A2AC_RATE_WINDOW: '10',
    };
    expect(resolveCallerLimits({}, env)).toEqual({
      maxOpenSessions: 3,
      maxRunningTasks: 4,
      rate: { requests: 50, windowMs: 10_000 },
    });
    expect(resolveCallerLimits({ 'max-running-tasks': '7', 'rate-limit': '9' }, env)).toMatchObject({
      maxRunningTasks: 7,
      rate: { requests: 9, windowMs: 10_000 },
    });
  });

  it('turns the running-task cap and the rate off with 0', () => {
    expect(resolveCallerLimits({ 'max-running-tasks': '0', 'rate-limit': '0' }, {})).toMatchObject({
      maxRunningTasks: null,
      rate: undefined,
    });
  });

  it('refuses values that are not whole numbers in range, naming the flag', () => {
    const refused = (flags: Record<string, string>): string => {
      try {
        resolveCallerLimits(flags, {});
        return 'accepted';
      } catch (error) {
        return `${String(errorCode(error))}: ${(error as Error).message}`;
      }
    };
    expect(refused({ 'max-open-sessions': '0' })).toMatch(/^CONFIG_INVALID: --max-open-sessions must be/);
    expect(refused({ 'max-running-tasks': '-1' })).toMatch(/^CONFIG_INVALID: --max-running-tasks must be/);
    expect(refused({ 'rate-limit': '1.5' })).toMatch(/^CONFIG_INVALID: --rate-limit must be/);
    expect(refused({ 'rate-window': '0' })).toMatch(/^CONFIG_INVALID: --rate-window must be/);
  });
});

import { LocalError } from '../shared/errors.js';

/**
 * Limits per caller identity (docs/host.md "Limits per caller"): each counts one caller over every
 * tenant and binding, so neither a tenant nor another transport is a way around it.
 */
export interface CallerLimits {
  /** Open ACMP negotiation sessions per caller, over every host sharing the database. */
  readonly maxOpenSessions: number;
  /** Running ACMP tasks per caller, over every host sharing the database; `null`: no cap. */
  readonly maxRunningTasks: number | null;
  /** Requests per caller per window, on each host (anonymous callers: per remote address); undefined: off. */
  readonly rate: RequestRate | undefined;
}

/** A request rate: at most `requests` in each window of `windowMs`. */
export interface RequestRate {
  readonly requests: number;
  readonly windowMs: number;
}

/** The flag spellings of the limits (what `serve` parses). */
export interface CallerLimitFlags {
  'max-open-sessions'?: string;
  'max-running-tasks'?: string;
  'rate-limit'?: string;
  'rate-window'?: string;
}

/** Environment variable of each limit. */
export const LIMIT_ENV = {
  maxOpenSessions: 'A2AC_MAX_OPEN_SESSIONS',
  maxRunningTasks: 'A2AC_MAX_RUNNING_TASKS',
  rateLimit: 'A2AC_RATE_LIMIT',
  rateWindow: 'A2AC_RATE_WINDOW',
} as const;

/** The defaults (docs/host.md "Limits per caller" says why). */
export const DEFAULT_CALLER_LIMITS = {
  maxOpenSessions: 8,
  maxRunningTasks: 32,
  rate: { requests: 600, windowMs: 60_000 },
} as const satisfies CallerLimits;

function whole(name: string, value: string, [min, max]: readonly [number, number]): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new LocalError(
      'CONFIG_INVALID',
      `${name} must be a whole number from ${min} to ${max}, got "${value}"`,
    );
  return n;
}

/**
 * The caller limits: flag, then environment variable, then default. `--max-running-tasks 0` and
 * `--rate-limit 0` turn that limit off; a session cap is always on (at least 1).
 * @throws LocalError `CONFIG_INVALID` naming the flag.
 */
export function resolveCallerLimits(
  flags: CallerLimitFlags,
  env: Record<string, string | undefined>,
): CallerLimits {
  const pick = (flag: string | undefined, key: keyof typeof LIMIT_ENV): string | undefined =>
    flag ?? (env[LIMIT_ENV[key]] || undefined);
  const sessions = pick(flags['max-open-sessions'], 'maxOpenSessions');
  const tasks = pick(flags['max-running-tasks'], 'maxRunningTasks');
  const requests = pick(flags['rate-limit'], 'rateLimit');
  const window = pick(flags['rate-window'], 'rateWindow');
  const maxRunningTasks =
    tasks === undefined
      ? DEFAULT_CALLER_LIMITS.maxRunningTasks
      : whole('--max-running-tasks', tasks, [0, 100_000]);
  const perWindow =
    requests === undefined
      ? DEFAULT_CALLER_LIMITS.rate.requests
      : whole('--rate-limit', requests, [0, 1_000_000]);
  const windowS =
    window === undefined
      ? DEFAULT_CALLER_LIMITS.rate.windowMs / 1000
      : whole('--rate-window', window, [1, 3600]);
  return {
    maxOpenSessions:
      sessions === undefined
        ? DEFAULT_CALLER_LIMITS.maxOpenSessions
        : whole('--max-open-sessions', sessions, [1, 100_000]),
    maxRunningTasks: maxRunningTasks === 0 ? null : maxRunningTasks,
    rate: perWindow === 0 ? undefined : { requests: perWindow, windowMs: windowS * 1000 },
  };
}

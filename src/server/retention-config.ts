import { LocalError } from '../shared/errors.js';
import type { PruneBatching, RetentionAges } from '../storage/retention/policy.js';

/** Retention of ended work (docs/operations.md "Retention"): the ages, the pace, how often a host prunes. */
export interface RetentionConfig {
  readonly ages: RetentionAges;
  readonly batching: PruneBatching;
  /** How often the host runs a pass in the background; `null`: never (`a2a-commerce prune` still can). */
  readonly intervalMs: number | null;
}

/** The flag spellings (what `serve` parses). */
export interface RetentionFlags {
  'retain-tasks'?: string;
  'retain-task-ids'?: string;
  'retain-sessions'?: string;
  'prune-interval'?: string;
  'prune-batch'?: string;
  'prune-pause'?: string;
}

/** Environment variable of each retention setting. */
export const RETENTION_ENV = {
  retainTasks: 'A2AC_RETAIN_TASKS',
  retainTaskIds: 'A2AC_RETAIN_TASK_IDS',
  retainSessions: 'A2AC_RETAIN_SESSIONS',
  pruneInterval: 'A2AC_PRUNE_INTERVAL',
  pruneBatch: 'A2AC_PRUNE_BATCH',
  prunePause: 'A2AC_PRUNE_PAUSE',
} as const;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The defaults (docs/operations.md "Retention" says why). */
export const DEFAULT_RETENTION = {
  ages: { tasksMs: 7 * DAY, taskIdsMs: 30 * DAY, sessionsMs: 7 * DAY },
  batching: { batchSize: 500, pauseMs: 100 },
  intervalMs: 10 * 60_000,
} as const satisfies RetentionConfig;

/** An age below this is refused: it would prune under a retry, a resubscribe or an agreement's invoke window. */
const MIN_AGE_MS = HOUR;
const MAX_AGE_MS = 3650 * DAY;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: HOUR, d: DAY };

function fail(message: string): never {
  throw new LocalError('CONFIG_INVALID', message);
}

/**
 * Parses a duration: a whole number and a unit, `ms`, `s`, `m`, `h` or `d` (`7d`, `12h`, `500ms`).
 * @throws LocalError `CONFIG_INVALID` naming `name` and the value.
 */
export function parseDuration(name: string, value: string, [min, max]: readonly [number, number]): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(value.trim());
  const ms = match ? Number(match[1]) * (UNITS[match[2] ?? ''] ?? NaN) : NaN;
  if (!Number.isSafeInteger(ms))
    fail(`${name} must be a duration like 7d, 12h, 30m or 500ms, got "${value}"`);
  if (ms < min || ms > max) fail(`${name} must be between ${show(min)} and ${show(max)}, got "${value}"`);
  return ms;
}

function show(ms: number): string {
  for (const [unit, size] of [
    ['d', DAY],
    ['h', HOUR],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** An age, or `off` (kept forever). */
export function parseAge(name: string, value: string): number | null {
  return /^(off|never)$/i.test(value.trim()) ? null : parseDuration(name, value, [MIN_AGE_MS, MAX_AGE_MS]);
}

function whole(name: string, value: string, [min, max]: readonly [number, number]): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    fail(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

/**
 * The retention settings: flag, then environment variable, then default. The task-ids age counts from
 * the pruning of the result, so an id always outlives the result it replays.
 * @throws LocalError `CONFIG_INVALID` naming the flag.
 */
export function resolveRetention(
  flags: RetentionFlags,
  env: Record<string, string | undefined>,
): RetentionConfig {
  const pick = (flag: string | undefined, key: keyof typeof RETENTION_ENV): string | undefined =>
    flag ?? (env[RETENTION_ENV[key]] || undefined);
  const age = (
    flag: keyof RetentionFlags,
    key: keyof typeof RETENTION_ENV,
    fallback: number,
  ): number | null => {
    const value = pick(flags[flag], key);
    return value === undefined ? fallback : parseAge(`--${flag}`, value);
  };
  const ages = {
    tasksMs: age('retain-tasks', 'retainTasks', DEFAULT_RETENTION.ages.tasksMs),
    taskIdsMs: age('retain-task-ids', 'retainTaskIds', DEFAULT_RETENTION.ages.taskIdsMs),
    sessionsMs: age('retain-sessions', 'retainSessions', DEFAULT_RETENTION.ages.sessionsMs),
  };
  const interval = pick(flags['prune-interval'], 'pruneInterval');
  const batch = pick(flags['prune-batch'], 'pruneBatch');
  const pauseMs = pick(flags['prune-pause'], 'prunePause');
  return {
    ages,
    batching: {
      batchSize:
        batch === undefined
          ? DEFAULT_RETENTION.batching.batchSize
          : whole('--prune-batch', batch, [1, 10_000]),
      pauseMs:
        pauseMs === undefined
          ? DEFAULT_RETENTION.batching.pauseMs
          : parseDuration('--prune-pause', pauseMs, [0, 60_000]),
    },
    intervalMs:
      interval === undefined
        ? DEFAULT_RETENTION.intervalMs
        : /^off$/i.test(interval.trim())
          ? null
          : parseDuration('--prune-interval', interval, [1000, DAY]),
  };
}

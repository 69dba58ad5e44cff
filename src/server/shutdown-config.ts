import { LocalError } from '../shared/errors.js';

/**
 * How the host stops on SIGTERM (docs/operations.md "Health, readiness and shutdown"): it turns
 * not-ready, waits `drainDelayMs` so balancers see it, then refuses new work and gives running tasks
 * `graceMs` to finish before it closes.
 */
export interface ShutdownConfig {
  /** Not-ready but still taking work this long before draining starts (default 0; Kubernetes: 5000). */
  readonly drainDelayMs: number;
  /** How long running tasks may take to finish once new work is refused (default 5000). */
  readonly graceMs: number;
}

export const DEFAULT_SHUTDOWN: ShutdownConfig = { drainDelayMs: 0, graceMs: 5_000 };

/** The flag of each setting (`serve --drain-delay-ms 5000`). */
export const SHUTDOWN_FLAGS = {
  drainDelayMs: 'drain-delay-ms',
  graceMs: 'shutdown-grace-ms',
} as const satisfies Record<keyof ShutdownConfig, string>;

/** The environment variable of each setting. */
export const SHUTDOWN_ENV = {
  drainDelayMs: 'A2AC_DRAIN_DELAY_MS',
  graceMs: 'A2AC_SHUTDOWN_GRACE_MS',
} as const satisfies Record<keyof ShutdownConfig, string>;

/** Flag values as the CLI parsed them. */
export type ShutdownFlags = { [K in keyof ShutdownConfig as (typeof SHUTDOWN_FLAGS)[K]]?: string };

/** Up to ten minutes each: longer belongs to the orchestrator's own grace, not to one host's stop. */
const MAX_MS = 600_000;

/**
 * Resolves the shutdown settings: flag, then environment variable, then {@link DEFAULT_SHUTDOWN}.
 * @throws LocalError `CONFIG_INVALID` naming the flag and variable, when a value is not an integer
 *   between 0 and 600000.
 */
export function resolveShutdown(
  flags: ShutdownFlags,
  env: Record<string, string | undefined>,
): ShutdownConfig {
  const value = (key: keyof ShutdownConfig): number => {
    const raw = flags[SHUTDOWN_FLAGS[key]] ?? (env[SHUTDOWN_ENV[key]] || undefined);
    if (raw === undefined) return DEFAULT_SHUTDOWN[key];
    const name = `--${SHUTDOWN_FLAGS[key]} / ${SHUTDOWN_ENV[key]}`;
    if (!/^\d+$/.test(raw.trim()))
      throw new LocalError('CONFIG_INVALID', `${name} must be an integer (milliseconds), got "${raw}"`);
    const n = Number(raw.trim());
    if (n > MAX_MS)
      throw new LocalError('CONFIG_INVALID', `${name} must be between 0 and ${MAX_MS}, got ${n}`);
    return n;
  };
  return { drainDelayMs: value('drainDelayMs'), graceMs: value('graceMs') };
}

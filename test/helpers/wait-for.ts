import { vi } from 'vitest';

/**
 * The one polling wait of the tests: resolves once `condition` holds, checking every `intervalMs`, and fails
 * the test after `timeoutMs` (a generous bound for a loaded machine, never a measurement). For time the
 * code under test schedules, drive a ManualClock (test/helpers/manual-clock.ts) instead of waiting.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await condition())) throw new Error('condition not met in time');
    },
    { timeout: options.timeoutMs ?? 8_000, interval: options.intervalMs ?? 10 },
  );
}

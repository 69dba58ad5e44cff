import { describe, expect, it, vi } from 'vitest';
import { Watchdog } from './watchdog.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Keeps this thread busy, as a long GC or a starved CPU would: no timer runs meanwhile. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

function reasonOf(watchdog: Watchdog): unknown {
  return (watchdog.signal.reason as { data?: { reason?: unknown } } | undefined)?.data?.reason;
}

/** Waits (real time, generous) until the watchdog fired, and says why. */
async function firedReason(watchdog: Watchdog): Promise<unknown> {
  await vi.waitFor(() => expect(watchdog.signal.aborted).toBe(true), { timeout: 5_000, interval: 10 });
  watchdog.dispose();
  return reasonOf(watchdog);
}

describe('Watchdog (Layer 1 §3.6: a hard deadline and the liveness window)', () => {
  it('fails on liveness when nothing restarts the window', async () => {
    expect(await firedReason(new Watchdog('task_w1', 60_000, 40))).toBe('liveness');
  });

  it('does not count the time paused for the consumer; listen() starts the window again', async () => {
    const watchdog = new Watchdog('task_w2', 60_000, 40);
    watchdog.pause();
    await sleep(200);
    expect(watchdog.signal.aborted).toBe(false);
    watchdog.listen();
    expect(await firedReason(watchdog)).toBe('liveness');
  });

  it('listens one more window when its timer ran late, then fails if still nothing came', async () => {
    const watchdog = new Watchdog('task_w3', 60_000, 300);
    busyFor(1_000);
    // A timer due now runs after the window's (due earlier), in the same timers phase.
    await sleep(1);
    expect(watchdog.signal.aborted).toBe(false);
    expect(await firedReason(watchdog)).toBe('liveness');
  });

  it('holds a window longer than a timer can (a provider advertising a huge heartbeat interval)', async () => {
    const watchdog = new Watchdog('task_w5', 2 ** 40, 3 * 2 ** 40);
    await sleep(50);
    expect(watchdog.signal.aborted).toBe(false);
    watchdog.dispose();
  });

  it('keeps the deadline while paused: nothing stops timeout_ms', async () => {
    const watchdog = new Watchdog('task_w4', 50, 10_000);
    watchdog.pause();
    expect(await firedReason(watchdog)).toBe('deadline');
  });
});

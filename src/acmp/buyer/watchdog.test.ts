import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { Watchdog } from './watchdog.js';

function reasonOf(watchdog: Watchdog): unknown {
  return (watchdog.signal.reason as { data?: { reason?: unknown } } | undefined)?.data?.reason;
}

describe('Watchdog (Layer 1 §3.6: a hard deadline and the liveness window), on manual time', () => {
  it('fails on liveness when nothing restarts the window, and not a moment before', async () => {
    const clock = new ManualClock();
    const watchdog = new Watchdog('task_w1', { deadlineMs: 60_000, livenessMs: 40, clock });
    await clock.advance(39);
    expect(watchdog.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(reasonOf(watchdog)).toBe('liveness');
    expect(clock.pending).toBe(0);
  });

  it('does not count the time paused for the consumer; listen() starts the window again', async () => {
    const clock = new ManualClock();
    const watchdog = new Watchdog('task_w2', { deadlineMs: 60_000, livenessMs: 40, clock });
    await clock.advance(30);
    watchdog.pause();
    await clock.advance(200);
    expect(watchdog.signal.aborted).toBe(false);
    watchdog.listen();
    await clock.advance(39);
    expect(watchdog.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(reasonOf(watchdog)).toBe('liveness');
  });

  it('listens one more window when its timer ran late, then fails if still nothing came', async () => {
    const clock = new ManualClock();
    const watchdog = new Watchdog('task_w3', { deadlineMs: 60_000, livenessMs: 300, clock });
    // The process could not run for a second (a long GC, no CPU): the window's timer runs 700 ms late.
    clock.jump(1_000);
    await clock.advance(0);
    expect(watchdog.signal.aborted).toBe(false);
    await clock.advance(299);
    expect(watchdog.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(reasonOf(watchdog)).toBe('liveness');
  });

  it('trusts a timer late by at most a sixth of the window', async () => {
    const clock = new ManualClock();
    const watchdog = new Watchdog('task_w6', { deadlineMs: 60_000, livenessMs: 300, clock });
    clock.jump(350);
    await clock.advance(0);
    expect(reasonOf(watchdog)).toBe('liveness');
  });

  it('holds a window longer than a timer can (a provider advertising a huge heartbeat interval)', async () => {
    const clock = new ManualClock();
    const watchdog = new Watchdog('task_w5', { deadlineMs: 2 ** 40, livenessMs: 3 * 2 ** 40, clock });
    await clock.advance(2 ** 31 - 2);
    expect(watchdog.signal.aborted).toBe(false);
    watchdog.dispose();
    expect(clock.pending).toBe(0);
  });

  it('keeps the deadline while paused: nothing stops timeout_ms', async () => {
    const clock = new ManualClock();
    const watchdog = new Watchdog('task_w4', { deadlineMs: 50, livenessMs: 10_000, clock });
    watchdog.pause();
    await clock.advance(49);
    expect(watchdog.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(reasonOf(watchdog)).toBe('deadline');
  });

  it('runs on real time by default', async () => {
    const watchdog = new Watchdog('task_w7', { deadlineMs: 20, livenessMs: undefined });
    await new Promise((resolve) => watchdog.signal.addEventListener('abort', resolve, { once: true }));
    expect(reasonOf(watchdog)).toBe('deadline');
  });
});

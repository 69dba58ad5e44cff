import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { isoTime, sleepOn, systemClock } from './clock.js';

describe('isoTime', () => {
  it('formats each clock reading, the same millisecond twice and clocks taking turns', () => {
    const at = (ms: number) => ({ now: () => ms });
    expect(isoTime(at(0))).toBe('1970-01-01T00:00:00.000Z');
    expect(isoTime(at(0))).toBe('1970-01-01T00:00:00.000Z');
    expect(isoTime(at(1_748_779_200_123))).toBe('2025-06-01T12:00:00.123Z');
    expect(isoTime(at(0))).toBe('1970-01-01T00:00:00.000Z');
  });

  it('throws for a reading that is no time, as Date does', () => {
    expect(() => isoTime({ now: () => Number.NaN })).toThrow(RangeError);
  });
});

describe('systemClock timers', () => {
  it('runs a timeout once and an interval until cancelled; a cancelled timeout never runs', async () => {
    const runs: string[] = [];
    systemClock.setTimeout(() => runs.push('once'), 5);
    const never = systemClock.setTimeout(() => runs.push('never'), 5);
    never.cancel();
    const every = systemClock.setInterval(() => runs.push('tick'), 5).background();
    await new Promise((resolve) => setTimeout(resolve, 40));
    every.cancel();
    const ticks = runs.filter((r) => r === 'tick').length;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(runs.filter((r) => r === 'once')).toHaveLength(1);
    expect(runs).not.toContain('never');
    expect(ticks).toBeGreaterThanOrEqual(2);
    expect(runs.filter((r) => r === 'tick')).toHaveLength(ticks);
  });
});

describe('sleepOn', () => {
  it('resolves when the clock reaches the delay, not before', async () => {
    const clock = new ManualClock();
    let woke = false;
    const slept = sleepOn(clock, 100).then(() => (woke = true));
    await clock.advance(99);
    expect(woke).toBe(false);
    await clock.advance(1);
    await slept;
    expect(woke).toBe(true);
  });

  it("rejects with the signal's reason and cancels its timer", async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const slept = sleepOn(clock, 100, controller.signal);
    controller.abort(new Error('stop'));
    await expect(slept).rejects.toThrow('stop');
    expect(clock.pending).toBe(0);
    const aborted = AbortSignal.abort(new Error('already'));
    await expect(sleepOn(clock, 1, aborted)).rejects.toThrow('already');
  });
});

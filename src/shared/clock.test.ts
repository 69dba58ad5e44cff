import { describe, expect, it } from 'vitest';
import { isoTime } from './clock.js';

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

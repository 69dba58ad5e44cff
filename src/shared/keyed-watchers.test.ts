import { describe, expect, it } from 'vitest';
import { KeyedWatchers } from './keyed-watchers.js';

describe('KeyedWatchers', () => {
  it('delivers values to the watchers of their key only, until they stop watching', () => {
    const watchers = new KeyedWatchers<number>();
    const seen: string[] = [];
    const stopA = watchers.watch('a', (v) => seen.push(`a${v}`));
    watchers.watch('b', (v) => seen.push(`b${v}`));
    watchers.emit('a', 1);
    stopA();
    watchers.emit('a', 2);
    watchers.emit('b', 3);
    expect(seen).toEqual(['a1', 'b3']);
    expect(watchers.keys()).toEqual(['b']);
    expect(watchers.watched('a')).toBe(false);
  });

  it('keeps delivering to the others when one listener throws', () => {
    const watchers = new KeyedWatchers();
    let reached = 0;
    watchers.watch('k', () => {
      throw new Error('boom');
    });
    watchers.watch('k', () => void (reached += 1));
    watchers.emit('k', undefined);
    expect(reached).toBe(1);
  });
});

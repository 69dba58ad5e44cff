import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { FrameBatch } from './frame-batch.js';

function sink(): { writes: string[]; write(text: string): void } {
  const writes: string[] = [];
  return { writes, write: (text) => void writes.push(text) };
}

describe('FrameBatch', () => {
  it('writes the frames of one turn at once, in order, by the end of the turn', async () => {
    const out = sink();
    const frames = new FrameBatch(out);
    frames.push('a');
    await Promise.resolve();
    frames.push('b');
    expect(out.writes).toEqual([]);
    await nextTurn();
    expect(out.writes).toEqual(['ab']);
    frames.push('c');
    await nextTurn();
    expect(out.writes).toEqual(['ab', 'c']);
  });

  it('writes at once when 64 KiB are held, and flush writes the rest now', async () => {
    const out = sink();
    const frames = new FrameBatch(out);
    const big = 'x'.repeat(40 * 1024);
    frames.push(big);
    frames.push(big);
    expect(out.writes).toEqual([big + big]);
    frames.push('tail');
    frames.flush();
    expect(out.writes).toEqual([big + big, 'tail']);
    await nextTurn();
    expect(out.writes).toHaveLength(2);
  });

  it('writes nothing after drop, not even on the turn it was due', async () => {
    const out = sink();
    const frames = new FrameBatch(out);
    frames.push('late');
    frames.drop();
    await nextTurn();
    frames.flush();
    expect(out.writes).toEqual([]);
  });
});

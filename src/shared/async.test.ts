import { afterEach, describe, expect, it, vi } from 'vitest';
import { AsyncQueue, sleep } from './async.js';

afterEach(() => {
  vi.useRealTimers();
});

async function take<T>(queue: AsyncQueue<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of queue) items.push(item);
  return items;
}

describe('AsyncQueue', () => {
  it('yields the items pushed before iteration, then ends', async () => {
    const queue = new AsyncQueue<number>();
    queue.push(1);
    queue.push(2);
    queue.end();
    expect(await take(queue)).toEqual([1, 2]);
  });

  it('hands an item to a consumer already waiting', async () => {
    const queue = new AsyncQueue<string>();
    const next = queue[Symbol.asyncIterator]().next();
    queue.push('a');
    expect(await next).toEqual({ value: 'a', done: false });
  });

  it('keeps undefined items as items', async () => {
    const queue = new AsyncQueue<undefined>();
    queue.push(undefined);
    queue.end();
    expect(await take(queue)).toEqual([undefined]);
  });

  it('delivers the items pushed before a failure, then the error', async () => {
    const queue = new AsyncQueue<number>();
    const items: number[] = [];
    queue.push(1);
    queue.fail(new Error('boom'));
    await expect(
      (async () => {
        for await (const item of queue) items.push(item);
      })(),
    ).rejects.toThrow('boom');
    expect(items).toEqual([1]);
  });

  it('rejects a waiting consumer when it fails', async () => {
    const queue = new AsyncQueue<number>();
    const next = queue[Symbol.asyncIterator]().next();
    queue.fail(new Error('boom'));
    await expect(next).rejects.toThrow('boom');
  });

  it('runs its cleanup when the consumer stops early and ignores later pushes', async () => {
    const onReturn = vi.fn();
    const queue = new AsyncQueue<number>(onReturn);
    queue.push(1);
    queue.push(2);
    for await (const item of queue) if (item === 1) break;
    queue.push(3);
    expect(onReturn).toHaveBeenCalledOnce();
    expect(queue.closed).toBe(true);
  });
});

describe('sleep', () => {
  it('resolves after the time without a signal', async () => {
    vi.useFakeTimers();
    const slept = sleep(1000);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(slept).resolves.toBeUndefined();
  });

  it('rejects with the reason as soon as the signal aborts', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const slept = sleep(1000, { signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(slept).rejects.toThrow('stop');
  });

  it('rejects at once for a signal already aborted', async () => {
    await expect(sleep(1000, { signal: AbortSignal.abort(new Error('gone')) })).rejects.toThrow('gone');
  });
});

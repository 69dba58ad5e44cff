import { sleepOn, systemClock } from './clock.js';

/** Resolves after `ms`, or rejects with `signal.reason` as soon as the signal aborts (the system clock). */
export function sleep(ms: number, options?: { signal?: AbortSignal }): Promise<void> {
  return sleepOn(systemClock, ms, options?.signal);
}

/**
 * A push-to-pull queue: producers `push` and `end`/`fail`, one consumer iterates. Cleanup runs when the
 * consumer stops early (`onReturn`).
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  /** Pushed items not yet taken, already in the shape `next()` resolves with. */
  private readonly items: IteratorYieldResult<T>[] = [];
  /** The consumer's pending `next()`, when it waits for an item. */
  private waiting: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  private done = false;
  private error: { error: unknown } | undefined;

  constructor(private readonly onReturn?: () => void) {}

  /** Adds an item; ignored after `end`/`fail`. */
  push(item: T): void {
    if (this.done) return;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting.resolve({ value: item, done: false });
    } else this.items.push({ value: item, done: false });
  }

  /** Ends the stream after the items already pushed. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.wake();
  }

  /** Ends the stream with an error, delivered after the items already pushed. */
  fail(error: unknown): void {
    if (this.done) return;
    this.done = true;
    this.error = { error };
    this.wake();
  }

  get closed(): boolean {
    return this.done;
  }

  private wake(): void {
    const waiting = this.waiting;
    if (!waiting || this.items.length > 0) return;
    this.waiting = undefined;
    if (this.error) waiting.reject(this.error.error);
    else waiting.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const item = this.items.shift();
        if (item) return Promise.resolve(item);
        if (this.done) {
          if (this.error) return Promise.reject(this.error.error);
          return Promise.resolve({ value: undefined, done: true });
        }
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.waiting = { resolve, reject };
        });
      },
      return: () => {
        this.done = true;
        this.items.length = 0;
        this.onReturn?.();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

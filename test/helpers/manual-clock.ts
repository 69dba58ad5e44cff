import type { TimerClock, TimerHandle } from '../../src/shared/clock.js';

interface Scheduled {
  readonly id: number;
  due: number;
  readonly run: () => void;
  readonly every: number | undefined;
}

/** Lets pending promise reactions and I/O callbacks run (what an `await` after a timer's callback needs). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Manual time for the protocol logic's timers (src/shared/clock.ts `TimerClock`): nothing happens until
 * {@link advance}, which runs every timer due by then in due order, with time set to each one's due
 * moment, and lets the promise reactions of each callback settle before the next, as real time would.
 */
export class ManualClock implements TimerClock {
  private at: number;
  private nextId = 1;
  private readonly timers = new Map<number, Scheduled>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.at = start;
  }

  now(): number {
    return this.at;
  }

  monotonic(): number {
    return this.at;
  }

  setTimeout(run: () => void, ms: number): TimerHandle {
    return this.schedule(run, ms, undefined);
  }

  setInterval(run: () => void, ms: number): TimerHandle {
    return this.schedule(run, ms, Math.max(ms, 1));
  }

  /** The timers not yet run or cancelled. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, running what falls due on the way. */
  async advance(ms: number): Promise<void> {
    const until = this.at + ms;
    for (;;) {
      await settle();
      const next = [...this.timers.values()]
        .filter((t) => t.due <= until)
        .sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!next) break;
      this.at = Math.max(this.at, next.due);
      if (next.every === undefined) this.timers.delete(next.id);
      else next.due += next.every;
      next.run();
    }
    this.at = until;
    await settle();
  }

  /**
   * Lets time pass `stepMs` at a time until `awaited` settles, for logic whose callbacks wait on real I/O
   * (a database round trip) between timers: each step also gives that I/O a few real milliseconds.
   */
  async passUntil<T>(awaited: Promise<T>, stepMs: number, limitMs = 60_000): Promise<T> {
    let settled = false;
    const watched = awaited.finally(() => (settled = true));
    for (let passed = 0; !settled && passed < limitMs; passed += stepMs) {
      await this.advance(stepMs);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return watched;
  }

  /** Moves the wall clock only, as a process that could not run sees it afterwards: no timer runs. */
  jump(ms: number): void {
    this.at += ms;
  }

  private schedule(run: () => void, ms: number, every: number | undefined): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, due: this.at + Math.max(ms, 0), run, every });
    const handle: TimerHandle = {
      cancel: () => void this.timers.delete(id),
      background: () => handle,
    };
    return handle;
  }
}

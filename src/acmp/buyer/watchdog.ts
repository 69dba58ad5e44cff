import { MAX_TIMER_MS } from '../wire/constants.js';
import { systemClock, type TimerClock, type TimerHandle } from '../../shared/clock.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';

/**
 * The buyer's two clocks (Layer 1 §3.6): a hard `timeout_ms` deadline that nothing extends, and an
 * optional liveness window that every chunk or heartbeat restarts ({@link pause} on receipt, {@link listen}
 * once the consumer asks for more). Either aborts `signal` with an AcmpError -33003 whose `data.reason` is
 * `deadline` or `liveness`.
 *
 * The liveness window measures the provider's silence while the buyer listens (docs/acmp-core.md "Buyer
 * liveness"): it is stopped while the consumer holds an event ({@link pause}, {@link listen}), and a
 * window whose timer ran late (this process could not run: a long GC, no CPU) is not trusted — what
 * arrived meanwhile waits unread in the socket — so the buyer listens for one more window.
 */
export class Watchdog {
  private readonly controller = new AbortController();
  private readonly deadline: TimerHandle;
  private liveness: TimerHandle | undefined;

  private readonly livenessMs: number | undefined;
  private readonly clock: TimerClock;

  constructor(
    private readonly taskId: string,
    options: { deadlineMs: number; livenessMs: number | undefined; clock?: TimerClock | undefined },
  ) {
    this.livenessMs = options.livenessMs;
    this.clock = options.clock ?? systemClock;
    this.deadline = this.clock.setTimeout(() => this.fire('deadline'), options.deadlineMs);
    this.listen();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The buyer waits for the provider again: the liveness window starts from now. */
  listen(): void {
    this.pause();
    if (this.livenessMs === undefined || this.controller.signal.aborted) return;
    this.arm(this.livenessMs);
  }

  /** The consumer holds an event: the provider's silence is not counted until {@link listen}. */
  pause(): void {
    this.liveness?.cancel();
    this.liveness = undefined;
  }

  dispose(): void {
    this.deadline.cancel();
    this.pause();
  }

  private arm(windowMs: number): void {
    // A longer delay than a timer holds would fire at once (Node clamps it to 1 ms): held as the longest.
    const delay = Math.min(windowMs, MAX_TIMER_MS);
    const due = this.clock.monotonic() + delay;
    this.liveness = this.clock.setTimeout(() => this.expire(due, delay), delay);
  }

  /** Fails the call, unless the timer ran more than a sixth of the window (half a heartbeat at 3×) late. */
  private expire(due: number, windowMs: number): void {
    if (this.clock.monotonic() - due > windowMs / 6) this.arm(windowMs);
    else this.fire('liveness');
  }

  private fire(reason: 'deadline' | 'liveness'): void {
    this.dispose();
    this.controller.abort(new AcmpError(ACMP_CODE.timeout, { task_id: this.taskId, reason }));
  }
}

/** `iterator.next()`, or a rejection with `signal.reason` as soon as the signal aborts. */
export function nextOrAbort<T>(iterator: AsyncIterator<T>, signal: AbortSignal): Promise<IteratorResult<T>> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<IteratorResult<T>>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    iterator.next().then(
      (result) => {
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

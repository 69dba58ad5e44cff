import { MAX_TIMER_MS } from './constants.js';
import { ACMP_CODE, AcmpError } from './errors.js';

/**
 * The buyer's two clocks (Layer 1 §3.6): a hard `timeout_ms` deadline that nothing extends, and an
 * optional liveness window that every chunk or heartbeat restarts. Either aborts `signal` with an
 * AcmpError -33003 whose `data.reason` is `deadline` or `liveness`.
 */
export class Watchdog {
  private readonly controller = new AbortController();
  private readonly deadline: NodeJS.Timeout;
  private liveness: NodeJS.Timeout | undefined;

  constructor(
    private readonly taskId: string,
    deadlineMs: number,
    private readonly livenessMs: number | undefined,
  ) {
    this.deadline = setTimeout(() => this.fire('deadline'), Math.min(deadlineMs, MAX_TIMER_MS));
    this.kick();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** A sign of life from the provider: restarts the liveness window. */
  kick(): void {
    if (this.livenessMs === undefined || this.controller.signal.aborted) return;
    clearTimeout(this.liveness);
    this.liveness = setTimeout(() => this.fire('liveness'), this.livenessMs);
  }

  dispose(): void {
    clearTimeout(this.deadline);
    clearTimeout(this.liveness);
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

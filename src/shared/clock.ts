/** Time source; injected so tests control it. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** A scheduled callback of a {@link TimerClock}; cancelling twice, or after it ran, does nothing. */
export interface TimerHandle {
  cancel(): void;
  /** A background timer: it does not keep the process alive (Node's `unref`). Returns the handle. */
  background(): TimerHandle;
}

/**
 * A clock that also schedules: every timer of the protocol logic (deadlines, liveness windows, heartbeats,
 * sweeps, grace periods) goes through one, so tests drive that logic with manual time
 * (test/helpers/manual-clock.ts) instead of sleeping. A timer keeps the process alive, as Node's do,
 * unless it is made a {@link TimerHandle.background} one.
 */
export interface TimerClock extends Clock {
  /** A monotonic millisecond reading (only differences mean anything): how late a timer ran. */
  monotonic(): number;
  /** Calls `run` once after `ms` (clamped to what a timer holds). */
  setTimeout(run: () => void, ms: number): TimerHandle;
  /** Calls `run` every `ms` until cancelled. */
  setInterval(run: () => void, ms: number): TimerHandle;
}

/** The longest delay a Node timer holds (2^31 − 1 ms); a longer one would fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

function handleOf(timer: NodeJS.Timeout, clear: (t: NodeJS.Timeout) => void): TimerHandle {
  const handle: TimerHandle = {
    cancel: () => clear(timer),
    background: () => {
      timer.unref();
      return handle;
    },
  };
  return handle;
}

/** The real clock: the wall clock, `performance.now()` and Node's timers. */
export const systemClock: TimerClock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (run, ms) => handleOf(setTimeout(run, Math.min(ms, MAX_TIMER_MS)), clearTimeout),
  setInterval: (run, ms) => handleOf(setInterval(run, Math.min(ms, MAX_TIMER_MS)), clearInterval),
};

/**
 * `clock` as a {@link TimerClock}: itself when it schedules, else its readings with the system's timers (an
 * options object may name a clock that only tells the time, as clocks did before timers were injected).
 */
export function timerClockOf(clock: Clock | TimerClock | undefined): TimerClock {
  if (clock === undefined) return systemClock;
  if ('setTimeout' in clock) return clock;
  return { ...systemClock, now: () => clock.now() };
}

/** Resolves after `ms` on `clock`, or rejects with `signal.reason` as soon as the signal aborts. */
export function sleepOn(clock: TimerClock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The last millisecond formatted and its text: ingest stamps several values within the same millisecond,
 * and a stream's events share one.
 */
let lastFormatted = { ms: Number.NaN, text: '' };

/** RFC 3339 UTC timestamp with millisecond precision. */
export function isoTime(clock: Clock = systemClock): string {
  return isoTimeAt(clock.now());
}

/** {@link isoTime} of a given instant (milliseconds since the epoch), as `new Date(ms).toISOString()`. */
export function isoTimeAt(ms: number): string {
  if (ms !== lastFormatted.ms) lastFormatted = { ms, text: new Date(ms).toISOString() };
  return lastFormatted.text;
}

/** Time source; injected so tests control it. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** RFC 3339 UTC timestamp with millisecond precision. */
export function isoTime(clock: Clock = systemClock): string {
  return new Date(clock.now()).toISOString();
}

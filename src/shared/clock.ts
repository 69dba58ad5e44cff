/** Time source; injected so tests control it. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** The last millisecond formatted and its text: ingest stamps several values within the same millisecond. */
let lastFormatted = { ms: Number.NaN, text: '' };

/** RFC 3339 UTC timestamp with millisecond precision. */
export function isoTime(clock: Clock = systemClock): string {
  const ms = clock.now();
  if (ms !== lastFormatted.ms) lastFormatted = { ms, text: new Date(ms).toISOString() };
  return lastFormatted.text;
}

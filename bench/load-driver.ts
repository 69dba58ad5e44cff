import { performance } from 'node:perf_hooks';
import type { LoadResult, SteadySpec } from './protocol.js';

/**
 * The request loop of the load generator, by count or by time, and the steady-state warm-up: windows of
 * `windowMs` until two successive windows agree within `tolerance` (or `maxWarmupMs` has passed), then a
 * measured phase of at least `minMs` and `minCount` operations, reported per window as well.
 */

/** Sends one request of a worker and returns the events it carried (throws on a wrong answer). */
export type SendOne = () => Promise<number>;

/** When a run stops: after `count` requests, or once `ms` have passed and at least `minCount` were sent. */
export type Until = { count: number } | { ms: number; minCount: number; maxMs: number };

/** Runs `concurrency` workers, each with its own `SendOne`, until the stop condition holds. */
export async function drive(workers: readonly SendOne[], until: Until, windowMs = 1000): Promise<LoadResult> {
  const latencies: number[] = [];
  const done: number[] = [];
  let issued = 0;
  let events = 0;
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const more = (): boolean => {
    if ('count' in until) return issued < until.count;
    const elapsed = performance.now() - started;
    return elapsed < until.maxMs && (elapsed < until.ms || issued < until.minCount);
  };
  const worker = async (send: SendOne): Promise<void> => {
    while (more()) {
      issued++;
      const t0 = performance.now();
      try {
        // Awaited first: `events += await …` would read `events` before the await and lose other workers' counts.
        const got = await send();
        events += got;
        const t1 = performance.now();
        latencies.push(t1 - t0);
        done.push(t1 - started);
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(workers.map(worker));
  const elapsedMs = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return {
    count: issued,
    elapsedMs,
    latencies,
    events,
    errors,
    firstError,
    windows: windowRates(done, { windowMs, elapsedMs }),
  };
}

/** Operations per second in each full window of a run (completion times in ms from its start). */
export function windowRates(
  doneAt: readonly number[],
  run: { windowMs: number; elapsedMs: number },
): number[] {
  const full = Math.floor(run.elapsedMs / run.windowMs);
  const counts = new Array<number>(full).fill(0);
  for (const t of doneAt) {
    const w = Math.floor(t / run.windowMs);
    if (w < full) counts[w]!++;
  }
  return counts.map((c) => c / (run.windowMs / 1000));
}

/** Whether the last two rates agree within `tolerance` (relative to their mean). */
export function isStable(rates: readonly number[], tolerance: number): boolean {
  if (rates.length < 2) return false;
  const a = rates[rates.length - 2]!;
  const b = rates[rates.length - 1]!;
  const mean = (a + b) / 2;
  return mean > 0 && Math.abs(a - b) / mean <= tolerance;
}

/**
 * Warms up window by window until throughput is steady; returns the window rates seen and whether the
 * last two agreed. Throws the first error of a window (a wrong answer aborts the run).
 */
export async function warmUp(
  workers: readonly SendOne[],
  steady: SteadySpec,
): Promise<{ rates: number[]; stable: boolean }> {
  const rates: number[] = [];
  const started = performance.now();
  while (!isStable(rates, steady.tolerance) && performance.now() - started < steady.maxWarmupMs) {
    const window = await drive(workers, { ms: steady.windowMs, minCount: 1, maxMs: steady.windowMs * 20 });
    if (window.errors > 0) throw new Error(`warm-up: ${window.errors} errors, first: ${window.firstError}`);
    rates.push(window.count / (window.elapsedMs / 1000));
  }
  return { rates, stable: isStable(rates, steady.tolerance) };
}

/** The measured phase of a steady-state run. */
export function measuredPhase(steady: SteadySpec): Until {
  return { ms: steady.minMs, minCount: steady.minCount, maxMs: steady.maxMs };
}

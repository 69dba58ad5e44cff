import { setTimeout as sleep } from 'node:timers/promises';
import type { PruneBatching } from './policy.js';

/** How a prune paces its statements, and what stops it early. */
export interface BatchLoop {
  readonly batching: PruneBatching;
  /** Aborted when the host stops: the statement running ends, no further one starts. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Runs `step` (one statement removing at most a batch of rows) until it removes less than a batch,
 * pausing between statements so that requests always find the database free most of the time. Stops
 * early, keeping what was done, when the signal aborts. Returns the rows removed.
 */
export async function inBatches(step: () => Promise<number>, loop: BatchLoop): Promise<number> {
  let total = 0;
  for (;;) {
    if (loop.signal?.aborted) return total;
    const rows = await step();
    total += rows;
    if (rows < loop.batching.batchSize) return total;
    if (!(await pause(loop))) return total;
  }
}

/** Waits the pause between two statements; false when the signal aborted meanwhile. */
export async function pause(loop: BatchLoop): Promise<boolean> {
  if (loop.batching.pauseMs <= 0) return !loop.signal?.aborted;
  try {
    await sleep(loop.batching.pauseMs, undefined, loop.signal ? { signal: loop.signal } : {});
    return true;
  } catch {
    return false;
  }
}

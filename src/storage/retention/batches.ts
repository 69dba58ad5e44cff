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
    const started = performance.now();
    const rows = await step();
    total += rows;
    if (rows < loop.batching.batchSize) return total;
    if (!(await pause(loop, performance.now() - started))) return total;
  }
}

/**
 * The most of its time a prune may spend in statements: 1 in 20. On SQLite a statement runs on the event
 * loop (better-sqlite3 is synchronous) and holds the only write lock, so requests wait while it runs; a
 * backlog of a million rows pruned at the configured pause alone halved invoke throughput
 * (bench/prune.ts). The pause therefore grows with the statements' own time.
 */
const DEFAULT_WORK_SHARE = 1 / 20;

/** The pause after a step that took `spentMs`: the configured pause, or longer to keep the work share. */
export function pauseAfter(spentMs: number, batching: PruneBatching): number {
  if (batching.pauseMs <= 0) return 0;
  const share = batching.maxWorkShare ?? DEFAULT_WORK_SHARE;
  return Math.max(batching.pauseMs, Math.ceil((spentMs * (1 - share)) / share));
}

/** Waits the pause after a step that took `spentMs`; false when the signal aborted meanwhile. */
export async function pause(loop: BatchLoop, spentMs = 0): Promise<boolean> {
  const ms = pauseAfter(spentMs, loop.batching);
  if (ms <= 0) return !loop.signal?.aborted;
  try {
    await sleep(ms, undefined, loop.signal ? { signal: loop.signal } : {});
    return true;
  } catch {
    return false;
  }
}

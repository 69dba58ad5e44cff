import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How the background checkpointer works. */
export interface CheckpointerOptions {
  /** Pause between passive checkpoints (default 100 ms). */
  intervalMs?: number;
  /** Told after each checkpoint that copied every frame of the WAL into the database file, with their number. */
  onCaughtUp?: (frames: number) => void;
  /** Told when the worker ended without `stop()` (it could not start, or crashed). */
  onLost?: () => void;
}

/**
 * The worker's code: its own connection to the database file, a PASSIVE checkpoint every `intervalMs`.
 * A passive checkpoint copies WAL frames into the database file and syncs it without waiting for the writer
 * or blocking it.
 */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file);
let timer;
parentPort.on('message', () => {
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
function step() {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    if (result && result.busy === 0 && result.log > 0 && result.log === result.checkpointed) parentPort.postMessage({ caughtUp: result.log });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
  timer = setTimeout(step, workerData.intervalMs);
}
timer = setTimeout(step, workerData.intervalMs);
`;

/** A running checkpointer; `stop` ends it and resolves once its connection is closed. */
export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * Copies SQLite's WAL into the database file on a worker thread (docs/acpspec-core.md "Ingest path"), so the writer's own automatic
 * checkpoint — which still runs in a commit once the WAL passes its threshold, and is what lets the WAL
 * start over (a checkpoint on another connection never sees the WAL at rest while the writer keeps
 * committing) — finds nearly everything copied already and only syncs. A checkpoint never makes a commit
 * more durable (WAL mode: a commit is durable against a process crash once its frames are in the WAL).
 * `onError` hears of failed checkpoints (the next one retries).
 */
export function startCheckpointer(
  file: string,
  onError: (message: string) => void,
  options: CheckpointerOptions = {},
): Checkpointer {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      file,
      module: createRequire(import.meta.url).resolve('better-sqlite3'),
      intervalMs: options.intervalMs ?? 100,
    },
    // No loader hooks or flags of the parent (e.g. tsx): the worker is plain CommonJS.
    execArgv: [],
  });
  worker.unref();
  let running = true;
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      running = false;
      if (!stopping) options.onLost?.();
      resolve();
    }),
  );
  worker.on('message', (message: { error?: string; caughtUp?: number }) => {
    if (message.error !== undefined) onError(message.error);
    if (message.caughtUp !== undefined) options.onCaughtUp?.(message.caughtUp);
  });
  worker.on('error', (error) => onError(error.message));
  return {
    async stop() {
      stopping = true;
      if (running) {
        // Held by the caller now: the process waits for the worker's connection to close.
        worker.ref();
        worker.postMessage('stop');
      }
      await exited;
    },
  };
}

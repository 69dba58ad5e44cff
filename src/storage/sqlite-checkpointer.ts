import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How the background checkpointer works; defaults suit a busy writer on one host. */
export interface CheckpointerOptions {
  /** Pause between passive checkpoints (default 200 ms). */
  intervalMs?: number;
  /** WAL frames (pages) after which a checkpoint also restarts the WAL, briefly holding writers (default 16,384 ≈ 64 MiB). */
  restartFrames?: number;
  /** Told each time the WAL was restarted (emptied), with the frames it held. */
  onRestart?: (frames: number) => void;
  /**
   * Told when the worker ended without `stop()` (it could not start, or crashed): the caller MUST then turn
   * its own connection's automatic checkpoints back on, or the WAL would grow without bound.
   */
  onLost?: () => void;
}

/**
 * The worker's code. It opens its own connection to the database file and checkpoints in a loop:
 * PASSIVE (copies WAL frames into the database file and syncs it, never waiting for or blocking the
 * writer), and TRUNCATE once the WAL has grown past `restartFrames` — a writer that never pauses never lets
 * a passive checkpoint reach the end of the WAL, so only a restart keeps the file bounded.
 */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
let timer;
parentPort.on('message', () => {
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
function step() {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    if (result && result.log > workerData.restartFrames) {
      const [restart] = db.pragma('wal_checkpoint(TRUNCATE)');
      if (restart && restart.busy === 0) parentPort.postMessage({ restarted: result.log });
    }
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
 * Runs SQLite's WAL checkpoints on a worker thread instead of inside the writer's commits (issue 10). With
 * `wal_autocheckpoint` on, every ~1,000 pages one commit copies the WAL into the database file and waits for
 * two fsyncs on the event loop's thread; a checkpoint does not make a commit more durable (WAL mode: a
 * commit is durable against a process crash once its frames are in the WAL), so moving it off the loop
 * keeps ingest from stalling. The caller MUST set `wal_autocheckpoint = 0` on its own connection.
 * `onError` hears of failed checkpoints (the next one retries).
 */
export function startCheckpointer(file: string, onError: (message: string) => void, options: CheckpointerOptions = {}): Checkpointer {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      file,
      module: createRequire(import.meta.url).resolve('better-sqlite3'),
      intervalMs: options.intervalMs ?? 200,
      restartFrames: options.restartFrames ?? 16_384,
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
  worker.on('message', (message: { error?: string; restarted?: number }) => {
    if (message.error !== undefined) onError(message.error);
    if (message.restarted !== undefined) options.onRestart?.(message.restarted);
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

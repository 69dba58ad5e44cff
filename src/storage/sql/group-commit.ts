import { LocalError } from '../../shared/errors.js';

/** Options of {@link GroupCommitter}. */
export interface GroupCommitOptions {
  /** Most items written in one database transaction. */
  maxBatch: number;
  /** Batches written at the same time (SQLite: 1, its one connection; PostgreSQL: a few pool connections). */
  lanes: number;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit (docs/acpspec-core.md "Ingest path"): items submitted while a batch is being written, or in the same turn of the
 * event loop, are written together by `write` — one database transaction for many items, so the cost of a
 * commit is shared. Each item still gets its own result, and a submitter hears back only when the batch
 * holding its item has been written (committed, hence durable). Items with the same `key` are never in one
 * batch nor in two batches at once: an item computed on a version of its transaction must see the commit of
 * the one before it. When a whole batch fails (a lost connection, a deadlock between hosts), its items are
 * written again one by one, so one bad item cannot fail the others.
 */
export class GroupCommitter<T, R> {
  private readonly queue: Waiting<T, R>[] = [];
  private readonly busyKeys = new Set<string>();
  private lanesBusy = 0;
  private scheduled = false;

  constructor(
    private readonly write: (batch: readonly T[]) => Promise<R[]>,
    private readonly keyOf: (item: T) => string,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Queues one item; resolves with its result once its batch is written. */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private written = { batches: 0, items: 0 };

  /** Items waiting, batches in flight, and batches and items written so far (for tests and metrics). */
  get stats(): { queued: number; lanesBusy: number; batches: number; items: number } {
    return { queued: this.queue.length, lanesBusy: this.lanesBusy, ...this.written };
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // After the current I/O phase: every request read in it joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    while (this.lanesBusy < this.options.lanes && this.queue.length > 0) {
      const batch = this.take();
      if (batch.length === 0) return;
      this.lanesBusy++;
      void this.run(batch).finally(() => {
        this.lanesBusy--;
        for (const waiting of batch) this.busyKeys.delete(this.keyOf(waiting.item));
        if (this.queue.length > 0) this.schedule();
      });
    }
  }

  /** The next batch: queued items in order, skipping a key already taken or in flight. */
  private take(): Waiting<T, R>[] {
    const batch: Waiting<T, R>[] = [];
    for (let i = 0; i < this.queue.length && batch.length < this.options.maxBatch;) {
      const waiting = this.queue[i];
      if (waiting === undefined) break;
      const key = this.keyOf(waiting.item);
      if (this.busyKeys.has(key)) {
        i++;
        continue;
      }
      this.busyKeys.add(key);
      batch.push(waiting);
      this.queue.splice(i, 1);
    }
    return batch;
  }

  private async run(batch: Waiting<T, R>[]): Promise<void> {
    this.written.batches++;
    this.written.items += batch.length;
    try {
      const results = await this.write(batch.map((w) => w.item));
      batch.forEach((waiting, i) => settle(waiting, results[i]));
    } catch (error) {
      const only = batch.length === 1 ? batch[0] : undefined;
      if (only !== undefined) {
        only.reject(error);
        return;
      }
      for (const waiting of batch) {
        try {
          settle(waiting, (await this.write([waiting.item]))[0]);
        } catch (single) {
          waiting.reject(single);
        }
      }
    }
  }
}

/** Hands an item its result; a write that returned fewer results than items is a bug, not a success. */
function settle<T, R>(waiting: Waiting<T, R>, result: R | undefined): void {
  if (result === undefined)
    waiting.reject(new LocalError('INVALID_STATE', 'the batch write returned no result for an item'));
  else waiting.resolve(result);
}

import type { TimerClock, TimerHandle } from '../../shared/clock.js';
import { errorFields, type Logger } from '../../shared/logger.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { replayChunks, type Delivery } from './delivery.js';
import type { Payload } from '../wire/task-messages.js';
import {
  isFinished,
  unrecordedEnd,
  type AcmpTaskRecord,
  type AcmpTaskStore,
  type FinishedTaskRecord,
  type TaskSignal,
} from './task-store.js';

/** A source of one task's events that invokes attach to: a local run, a stored outcome, another host's run. */
export interface TaskFeed {
  /** Replays what happened so far (chunks from seq 0), then delivers live; returns a detach function. */
  attach(delivery: Delivery): () => void;
}

/** Replays a finished task's stored outcome (Layer 1 §3.1.1: return the existing result). */
export class StoredFeed implements TaskFeed {
  constructor(
    private readonly record: FinishedTaskRecord,
    private readonly chunks: readonly Payload[],
  ) {}

  attach(delivery: Delivery): () => void {
    for (const chunk of replayChunks(this.record.outcome, this.chunks)) delivery.chunk(chunk);
    delivery.finish(this.record);
    return () => {};
  }
}

/** Builds the feed of a finished record, reading its stored chunks when it has any. */
export async function storedFeed(store: AcmpTaskStore, record: FinishedTaskRecord): Promise<StoredFeed> {
  const chunks =
    record.outcome.kind === 'result' && record.chunkCount > 0 ? await store.chunks(record.taskId, 0) : [];
  return new StoredFeed(record, chunks);
}

/** What a {@link RemoteFeed} needs. */
export interface RemoteFeedDeps {
  readonly store: AcmpTaskStore;
  readonly clock: TimerClock;
  readonly logger: Logger;
  /** How often the record is re-read in case a signal was lost. */
  readonly fallbackMs: number;
  /** Whether heartbeats are advertised (and so relayed). */
  readonly heartbeats: boolean;
  readonly onDone: () => void;
}

/**
 * Follows a task another host runs: signals from the store (LISTEN/NOTIFY on PostgreSQL) say what changed
 * — chunks, heartbeats, the end — and the feed reads it from the record, so every follower on every host
 * sees the stored chunks in order and the stored final state. A slow periodic read covers lost signals.
 * A dead owner's record is finished by the hosts' reaper (-33003 `owner_lost`), which this feed then sees.
 */
export class RemoteFeed implements TaskFeed {
  private readonly deliveries = new Set<Delivery>();
  private readonly chunks: Payload[] = [];
  private final: FinishedTaskRecord | undefined;
  private unwatch: (() => void) | undefined;
  private timer: TimerHandle | undefined;
  private reading: Promise<void> | undefined;
  private again = false;
  private needRecord = false;
  private markDone: () => void = () => {};
  /** Resolves once the final state was delivered (or the follow stopped). */
  readonly done = new Promise<void>((resolve) => (this.markDone = resolve));

  constructor(
    private readonly taskId: string,
    private readonly deps: RemoteFeedDeps,
  ) {}

  /** Starts following; resolves once what is stored so far has been read. */
  async start(): Promise<this> {
    this.unwatch = this.deps.store.watch(this.taskId, (signal) => this.onSignal(signal));
    this.timer = this.deps.clock.setInterval(() => void this.refresh(), this.deps.fallbackMs).background();
    await this.refresh();
    return this;
  }

  attach(delivery: Delivery): () => void {
    for (const chunk of this.chunks) delivery.chunk(chunk);
    if (this.final) {
      delivery.finish(this.final);
      return () => {};
    }
    this.deliveries.add(delivery);
    return () => this.deliveries.delete(delivery);
  }

  /** Ends the follow without touching the store (provider close): followers get -33099. */
  stop(): void {
    if (this.final) return;
    const error = new AcmpError(ACMP_CODE.internal, { task_id: this.taskId }).toObject();
    this.complete(unrecordedEnd(this.taskId, { kind: 'error', error }, this.deps.clock.now()));
  }

  private onSignal(signal: TaskSignal): void {
    if (signal.kind === 'heartbeat') {
      if (!this.deps.heartbeats || this.final) return;
      for (const d of this.deliveries) d.heartbeat(signal.progress, signal.detail);
      return;
    }
    // New chunks are read straight from the chunk table (one query); anything else re-reads the record.
    void this.refresh(signal.kind === 'chunks' && signal.count > this.chunks.length ? 'chunks' : 'record');
  }

  /** Reads what changed; one read at a time, and one more if a signal arrived meanwhile. */
  private refresh(what: 'chunks' | 'record' = 'record'): Promise<void> {
    if (what === 'record') this.needRecord = true;
    if (this.final) return Promise.resolve();
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.again = false;
        const needRecord = this.needRecord;
        this.needRecord = false;
        try {
          if (needRecord) await this.read();
          else this.appendChunks(await this.deps.store.chunks(this.taskId, this.chunks.length));
        } catch (error) {
          this.deps.logger.warn('acmp.follow_read_failed', { task_id: this.taskId, ...errorFields(error) });
        }
      } while (this.again && !this.final);
      this.reading = undefined;
    })();
    return this.reading;
  }

  private async read(): Promise<void> {
    const { store } = this.deps;
    const record = await store.get(this.taskId);
    if (!record) return;
    await this.readChunks(record);
    if (isFinished(record)) this.complete(record);
  }

  private async readChunks(record: AcmpTaskRecord): Promise<void> {
    if (record.chunkCount <= this.chunks.length) return;
    if (record.outcome?.kind === 'error') return;
    this.appendChunks(await this.deps.store.chunks(this.taskId, this.chunks.length));
  }

  private appendChunks(fresh: readonly Payload[]): void {
    for (const chunk of fresh) {
      this.chunks.push(chunk);
      for (const d of this.deliveries) d.chunk(chunk);
    }
  }

  private complete(record: FinishedTaskRecord): void {
    if (this.final) return;
    this.final = record;
    this.timer?.cancel();
    this.unwatch?.();
    if (record.outcome.kind === 'result' && this.chunks.length === 0) {
      for (const chunk of replayChunks(record.outcome, [])) this.chunks.push(chunk);
      for (const d of this.deliveries) for (const chunk of this.chunks) d.chunk(chunk);
    }
    for (const d of this.deliveries) d.finish(record);
    this.deliveries.clear();
    this.deps.onDone();
    this.markDone();
  }
}

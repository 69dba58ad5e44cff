import { sleepOn, type TimerClock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import { AsyncQueue } from '../../shared/async.js';
import { Delivery } from './delivery.js';
import { LocalExecution, type ExecutionDeps } from './execution.js';
import { reusedTaskIdError, sameScope, taskIdInUseError } from './provider-checks.js';
import type { Admission, AttachOptions, TaskEvent } from './provider-types.js';
import { RemoteFeed, storedFeed, type TaskFeed } from './task-feed.js';
import { isFinished, type AcmpTaskRecord, type AcmpTaskStore, type TaskScope } from './task-store.js';

/** What one task id resolves to on this host: a task to attach to, or a refusal for that very request. */
export type Slot =
  | { readonly kind: 'task'; readonly record: AcmpTaskRecord; readonly feed: TaskFeed }
  | { readonly kind: 'refusal'; readonly scope: TaskScope; readonly hash: string; readonly error: unknown };

/** A slot with a task to attach to. */
export type TaskSlot = Extract<Slot, { kind: 'task' }>;

/** What {@link TaskSlots} reads tasks from and follows them with. */
export interface TaskSlotsOptions {
  readonly store: AcmpTaskStore;
  readonly clock: TimerClock;
  readonly logger: Logger;
  /** How often a follow re-reads a task running elsewhere in case a signal was lost. */
  readonly fallbackMs: number;
  /** The host advertises heartbeats (a follow relays them). */
  readonly heartbeats: boolean;
}

interface LocalEntry {
  readonly slot: Promise<Slot>;
}

/**
 * The task ids with live work or followers on this host: one entry per task id, set before the first
 * await so that concurrent arrivals share one resolution (Layer 1 §3.1.1); the executions running here;
 * and the follows of tasks running on other hosts (docs/acmp-core.md "The task record").
 */
export class TaskSlots {
  private readonly local = new Map<string, LocalEntry>();
  private readonly executions = new Map<string, LocalExecution>();
  private readonly follows = new Set<RemoteFeed>();
  private drainingNow = false;

  constructor(private readonly options: TaskSlotsOptions) {}

  /** True once {@link drain} was called: no new work is to start here (the host is stopping). */
  get draining(): boolean {
    return this.drainingNow;
  }

  /** The slot of a task id with an entry here (pending while it is being resolved). */
  entry(taskId: string): Promise<Slot> | undefined {
    return this.local.get(taskId)?.slot;
  }

  /** Creates the local entry of a task id synchronously, so concurrent arrivals share one resolution. */
  enter(taskId: string, resolve: () => Promise<Slot>): Promise<Slot> {
    const entry: LocalEntry = { slot: resolve() };
    this.local.set(taskId, entry);
    const forget = (): void => {
      if (this.local.get(taskId) === entry) this.local.delete(taskId);
    };
    entry.slot.then((slot) => {
      if (slot.kind === 'refusal' || !this.isLive(taskId, slot.feed)) forget();
      else this.onFeedDone(slot.feed, forget);
    }, forget);
    return entry.slot;
  }

  /**
   * The slot of a stored task (docs/acmp-core.md "Claim rules"): another agent's task is refused as in use
   * and the same agent's with other params as reused — never joined, replayed or revealed — else the task
   * is replayed (finished) or followed (running on another host).
   */
  async slotFor(record: AcmpTaskRecord, scope: TaskScope, hash: string): Promise<Slot> {
    if (!sameScope(record.scope, scope))
      return { kind: 'refusal', scope, hash, error: taskIdInUseError(record.taskId) };
    if (record.paramsHash !== hash)
      return { kind: 'refusal', scope, hash, error: reusedTaskIdError(record.taskId) };
    const { store, clock, logger, fallbackMs, heartbeats } = this.options;
    if (isFinished(record)) return { kind: 'task', record, feed: await storedFeed(store, record) };
    const follow: RemoteFeed = new RemoteFeed(record.taskId, {
      store,
      clock,
      logger,
      fallbackMs,
      heartbeats,
      onDone: () => this.follows.delete(follow),
    });
    this.follows.add(follow);
    return { kind: 'task', record, feed: await follow.start() };
  }

  /** Starts the execution of a task this host claimed; it leaves the slots when its outcome is delivered. */
  run(record: AcmpTaskRecord, deps: Omit<ExecutionDeps, 'onDone'>): TaskSlot {
    const execution = new LocalExecution({ ...deps, onDone: () => this.executions.delete(record.taskId) });
    this.executions.set(record.taskId, execution);
    execution.start();
    return { kind: 'task', record, feed: execution };
  }

  /** The execution of a task running here. */
  execution(taskId: string): LocalExecution | undefined {
    return this.executions.get(taskId);
  }

  /** The ids of the tasks running here. */
  running(): string[] {
    return [...this.executions.keys()];
  }

  /** Marks the slots {@link draining} and waits for the running executions to end, at most `graceMs`. */
  async drain(graceMs: number): Promise<void> {
    this.drainingNow = true;
    const running = [...this.executions.values()].map((e) => e.done);
    if (running.length === 0) return;
    const ended = new AbortController();
    const grace = sleepOn(this.options.clock, graceMs, ended.signal).catch(() => undefined);
    await Promise.race([Promise.all(running), grace]);
    ended.abort();
  }

  /** Stops every follow, and every execution with the error `code`. */
  async stop(code: number): Promise<void> {
    for (const follow of this.follows) follow.stop();
    await Promise.all([...this.executions.values()].map((e) => e.stop(code)));
  }

  private isLive(taskId: string, feed: TaskFeed): boolean {
    return (
      (feed instanceof LocalExecution && this.executions.get(taskId) === feed) ||
      (feed instanceof RemoteFeed && this.follows.has(feed))
    );
  }

  /** Calls `done` when a live feed ends (its execution or follow is removed). */
  private onFeedDone(feed: TaskFeed, done: () => void): void {
    if (feed instanceof LocalExecution || feed instanceof RemoteFeed) void feed.done.then(done);
    else done();
  }
}

/**
 * Attaches one invoke to a task's feed: its events, as the invoke asked for them (`stream`), until the
 * task's outcome or until `signal` says the consumer went away (the work goes on).
 */
export function attachToSlot(slot: TaskSlot, options: AttachOptions & { stream: boolean }): Admission {
  const { signal } = options;
  let detach = (): void => {};
  const onDetach = (): void => {
    detach();
    queue.end();
  };
  const queue = new AsyncQueue<TaskEvent>(() => {
    detach();
    signal?.removeEventListener('abort', onDetach);
  });
  const delivery = new Delivery({
    taskId: slot.record.taskId,
    mode: { stream: options.stream, notify: options.canStream },
    sink: (event) => queue.push(event),
    end: () => {
      signal?.removeEventListener('abort', onDetach);
      queue.end();
    },
  });
  if (signal?.aborted) queue.end();
  else {
    signal?.addEventListener('abort', onDetach, { once: true });
    detach = slot.feed.attach(delivery);
  }
  return { kind: 'task', record: slot.record, events: queue };
}

import type { Payload } from '../wire/task-messages.js';
import { SignalHub } from './signal-hub.js';
import type {
  AcmpTaskRecord,
  AcmpTaskStore,
  AppendChunks,
  ClaimOutcome,
  FinishTask,
  HostBeat,
  NewAcmpTask,
  TaskListQuery,
  TaskScope,
  TaskSignal,
} from './task-store.js';

/**
 * An in-process {@link AcmpTaskStore}: the provider's default. Every operation runs synchronously under
 * the hood, so claim and compare-and-set are atomic. Records are immutable objects replaced on change,
 * and chunks are copied in, so callers cannot mutate stored state.
 */
export class MemoryAcmpTaskStore implements AcmpTaskStore {
  private readonly tasks = new Map<string, AcmpTaskRecord>();
  private readonly chunkLists = new Map<string, Payload[]>();
  private readonly hosts = new Map<string, number>();
  private readonly hub = new SignalHub();
  /** The running tasks' ids by caller identity: the cap and the orphan sweep read these, not every record. */
  private readonly running = new Map<string, Set<string>>();

  claim(task: NewAcmpTask, maxRunning?: number): Promise<ClaimOutcome> {
    const existing = this.tasks.get(task.taskId);
    if (existing) return Promise.resolve({ claimed: false, existing });
    if (maxRunning !== undefined && this.runningOf(task.scope.agent) >= maxRunning)
      return Promise.resolve({ claimed: false, capReached: true });
    this.tasks.set(task.taskId, { ...task, state: 'running', updatedAt: task.createdAt, chunkCount: 0 });
    const ids = this.running.get(task.scope.agent) ?? new Set<string>();
    this.running.set(task.scope.agent, ids.add(task.taskId));
    return Promise.resolve({ claimed: true });
  }

  /** How many tasks of a caller identity run (in every tenant). */
  private runningOf(agent: string): number {
    return this.running.get(agent)?.size ?? 0;
  }

  /** A task of `agent` stopped running (its one way out of `running` is {@link finish}). */
  private stopped(agent: string, taskId: string): void {
    const ids = this.running.get(agent);
    ids?.delete(taskId);
    if (ids?.size === 0) this.running.delete(agent);
  }

  get(taskId: string): Promise<AcmpTaskRecord | undefined> {
    return Promise.resolve(this.tasks.get(taskId));
  }

  chunks(taskId: string, from: number): Promise<Payload[]> {
    return Promise.resolve(structuredClone((this.chunkLists.get(taskId) ?? []).slice(from)));
  }

  appendChunks(taskId: string, append: AppendChunks): Promise<boolean> {
    const { hostId, from, chunks } = append;
    const record = this.tasks.get(taskId);
    if (!record || record.state !== 'running' || record.hostId !== hostId || record.chunkCount !== from) {
      return Promise.resolve(false);
    }
    const list = this.chunkLists.get(taskId) ?? [];
    list.push(...structuredClone(chunks));
    this.chunkLists.set(taskId, list);
    this.tasks.set(taskId, { ...record, chunkCount: list.length });
    this.emit({ kind: 'chunks', taskId, count: list.length });
    return Promise.resolve(true);
  }

  finish(taskId: string, finish: FinishTask): Promise<{ won: boolean; record: AcmpTaskRecord } | undefined> {
    const record = this.tasks.get(taskId);
    if (!record) return Promise.resolve(undefined);
    if (record.state !== 'running' || (finish.hostId !== undefined && record.hostId !== finish.hostId)) {
      return Promise.resolve({ won: false, record });
    }
    const done: AcmpTaskRecord = {
      ...record,
      state: 'finished',
      outcome: structuredClone(finish.outcome),
      end: finish.end,
      finishedAt: finish.at,
      updatedAt: finish.at,
    };
    this.tasks.set(taskId, done);
    this.stopped(record.scope.agent, taskId);
    this.emit({ kind: 'finished', taskId });
    return Promise.resolve({ won: true, record: done });
  }

  heartbeat(taskId: string, progress?: number, detail?: string): void {
    this.emit({
      kind: 'heartbeat',
      taskId,
      ...(progress !== undefined ? { progress } : {}),
      ...(detail !== undefined ? { detail } : {}),
    });
  }

  watch(taskId: string, listener: (signal: TaskSignal) => void): () => void {
    return this.hub.watch(taskId, listener);
  }

  list(scope: TaskScope, query: TaskListQuery): Promise<{ records: AcmpTaskRecord[]; total: number }> {
    const matches = [...this.tasks.values()]
      .filter(
        (r) => r.scope.tenant === scope.tenant && r.scope.agent === scope.agent && matchesQuery(r, query),
      )
      .sort((a, b) => b.updatedAt - a.updatedAt || (a.taskId < b.taskId ? 1 : a.taskId > b.taskId ? -1 : 0));
    const after = query.after;
    const page = after
      ? matches.filter(
          (r) =>
            r.updatedAt < after.updatedAt || (r.updatedAt === after.updatedAt && r.taskId < after.taskId),
        )
      : matches;
    return Promise.resolve({ records: page.slice(0, query.limit), total: matches.length });
  }

  beat(host: HostBeat): Promise<void> {
    this.hosts.set(host.hostId, host.at);
    return Promise.resolve();
  }

  retire(hostId: string): Promise<void> {
    this.hosts.delete(hostId);
    return Promise.resolve();
  }

  orphans(staleBefore: number, limit: number): Promise<string[]> {
    const ids: string[] = [];
    for (const running of this.running.values()) {
      for (const taskId of running) {
        if (ids.length >= limit) return Promise.resolve(ids);
        const record = this.tasks.get(taskId);
        if (!record) continue;
        const beat = this.hosts.get(record.hostId);
        const stale = beat === undefined ? record.createdAt < staleBefore : beat < staleBefore;
        if (stale) ids.push(taskId);
      }
    }
    return Promise.resolve(ids);
  }

  lost(hostId: string, taskIds: readonly string[]): Promise<string[]> {
    return Promise.resolve(
      taskIds.filter((id) => {
        const record = this.tasks.get(id);
        return !record || record.state !== 'running' || record.hostId !== hostId;
      }),
    );
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private emit(signal: TaskSignal): void {
    this.hub.emit(signal);
  }
}

/** Whether a record passes a list query's filters (not its cursor). */
function matchesQuery(record: AcmpTaskRecord, query: TaskListQuery): boolean {
  if (query.contextId !== undefined && record.contextId !== query.contextId) return false;
  if (query.updatedAfter !== undefined && !(record.updatedAt > query.updatedAfter)) return false;
  if (query.state === undefined) return true;
  return query.state === 'running' ? record.state === 'running' : record.end === query.state;
}

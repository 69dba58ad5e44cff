import type {
  AcmpTaskRecord,
  AcmpTaskStore,
  FinishCondition,
  NewAcmpTask,
  TaskOutcome,
} from './task-store.js';

/**
 * An in-process {@link AcmpTaskStore}: the provider's default. Every operation is synchronous under the
 * hood, so claim and compare-and-set are atomic. Records are copied in and out (structuredClone) so
 * callers cannot mutate stored state.
 */
export class MemoryAcmpTaskStore implements AcmpTaskStore {
  private readonly tasks = new Map<string, AcmpTaskRecord>();

  claim(task: NewAcmpTask): Promise<{ claimed: true } | { claimed: false; existing: AcmpTaskRecord }> {
    const existing = this.tasks.get(task.taskId);
    if (existing) return Promise.resolve({ claimed: false, existing: structuredClone(existing) });
    this.tasks.set(task.taskId, {
      ...task,
      state: 'running',
      aliveAt: task.createdAt,
      cancelRequested: false,
    });
    return Promise.resolve({ claimed: true });
  }

  get(taskId: string): Promise<AcmpTaskRecord | undefined> {
    const record = this.tasks.get(taskId);
    return Promise.resolve(record && structuredClone(record));
  }

  touch(taskId: string, ownerId: string, aliveAt: number): Promise<{ cancelRequested: boolean } | undefined> {
    const record = this.tasks.get(taskId);
    if (!record || record.state !== 'running' || record.ownerId !== ownerId) return Promise.resolve(undefined);
    this.tasks.set(taskId, { ...record, aliveAt });
    return Promise.resolve({ cancelRequested: record.cancelRequested });
  }

  finish(taskId: string, outcome: TaskOutcome, finishedAt: number, condition?: FinishCondition): Promise<boolean> {
    const record = this.tasks.get(taskId);
    if (!record || record.state !== 'running') return Promise.resolve(false);
    if (condition?.ownerId !== undefined && record.ownerId !== condition.ownerId) return Promise.resolve(false);
    if (condition?.aliveBefore !== undefined && !(record.aliveAt < condition.aliveBefore)) return Promise.resolve(false);
    this.tasks.set(taskId, { ...record, state: 'finished', outcome: structuredClone(outcome), finishedAt });
    return Promise.resolve(true);
  }

  requestCancel(taskId: string): Promise<boolean> {
    const record = this.tasks.get(taskId);
    if (!record || record.state !== 'running') return Promise.resolve(false);
    this.tasks.set(taskId, { ...record, cancelRequested: true });
    return Promise.resolve(true);
  }
}

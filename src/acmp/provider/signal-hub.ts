import { KeyedWatchers } from '../../shared/keyed-watchers.js';
import type { TaskSignal } from './task-store.js';

/**
 * In-process fan-out of task signals by task id. Memory and SQLite stores deliver their own signals
 * through one; the PostgreSQL store feeds it from LISTEN.
 */
export class SignalHub {
  private readonly watchers = new KeyedWatchers<TaskSignal>();

  watch(taskId: string, listener: (signal: TaskSignal) => void): () => void {
    return this.watchers.watch(taskId, listener);
  }

  /** Whether anyone on this process watches the task. */
  watched(taskId: string): boolean {
    return this.watchers.watched(taskId);
  }

  /** Tells every watcher to read its task again (signals may have been lost). */
  resync(): void {
    for (const taskId of this.watchers.keys()) this.emit({ kind: 'resync', taskId });
  }

  emit(signal: TaskSignal): void {
    this.watchers.emit(signal.taskId, signal);
  }
}

import type { TaskSignal } from './task-store.js';

/**
 * In-process fan-out of task signals by task id. Memory and SQLite stores deliver their own signals
 * through one; the PostgreSQL store feeds it from LISTEN. A listener that throws does not stop the others.
 */
export class SignalHub {
  private readonly listeners = new Map<string, Set<(signal: TaskSignal) => void>>();

  watch(taskId: string, listener: (signal: TaskSignal) => void): () => void {
    let set = this.listeners.get(taskId);
    if (!set) {
      set = new Set();
      this.listeners.set(taskId, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(taskId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(taskId);
    };
  }

  /** Whether anyone on this process watches the task. */
  watched(taskId: string): boolean {
    return this.listeners.has(taskId);
  }

  /** Tells every watcher to read its task again (signals may have been lost). */
  resync(): void {
    for (const taskId of [...this.listeners.keys()]) this.emit({ kind: 'resync', taskId });
  }

  emit(signal: TaskSignal): void {
    const set = this.listeners.get(signal.taskId);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(signal);
      } catch {
        // A watcher's failure is its own; the signal still reaches the others.
      }
    }
  }
}

/**
 * Listeners grouped by a key (a task, an escrow, a session id): the one in-process fan-out every store
 * uses to tell watchers that something of theirs changed. A listener that throws does not stop the others.
 */
export class KeyedWatchers<T = void> {
  private readonly listeners = new Map<string, Set<(value: T) => void>>();

  /** Calls `listener` for every value emitted under `key` until the returned function is called. */
  watch(key: string, listener: (value: T) => void): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(listener);
    const own = set;
    return () => {
      own.delete(listener);
      if (own.size === 0 && this.listeners.get(key) === own) this.listeners.delete(key);
    };
  }

  /** Whether anyone watches `key`. */
  watched(key: string): boolean {
    return this.listeners.has(key);
  }

  /** The keys someone watches (e.g. to tell them all to re-read after a lost connection). */
  keys(): string[] {
    return [...this.listeners.keys()];
  }

  emit(key: string, value: T): void {
    const set = this.listeners.get(key);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(value);
      } catch {
        // A watcher's failure is its own; the value still reaches the others.
      }
    }
  }
}

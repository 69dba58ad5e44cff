/** The state of a database's LISTEN connections as a readiness check reports it. */
export type ListenState = 'ok' | 'down' | 'none';

/** One LISTEN connection's reports to its {@link ListenConnections}. */
export interface ListenTracker {
  /** The connection listens: notifications flow. */
  up(): void;
  /** The connection is lost (or not yet open): notifications are missed until it is back. */
  down(): void;
  /** The listener was closed on purpose: it no longer counts. */
  closed(): void;
}

/**
 * The LISTEN connections opened on one PostgreSQL database (one per store that follows rows,
 * src/storage/sql/pg-listener.ts), so the host's readiness can say whether notifications flow
 * (docs/operations.md "Health, readiness and shutdown"). Listeners report; readers ask {@link state}
 * or follow {@link onChange}.
 */
export class ListenConnections {
  private readonly connected = new Map<object, boolean>();
  private readonly followers = new Set<() => void>();

  /** Registers one connection, counted as down until it reports {@link ListenTracker.up}. */
  track(): ListenTracker {
    const key = {};
    const report = (up: boolean | undefined): void => {
      const before = this.state();
      if (up === undefined) this.connected.delete(key);
      else this.connected.set(key, up);
      if (this.state() !== before) for (const follower of this.followers) follower();
    };
    report(false);
    return { up: () => report(true), down: () => report(false), closed: () => report(undefined) };
  }

  /** `ok` when every registered connection listens, `down` when one does not, `none` without any. */
  state(): ListenState {
    if (this.connected.size === 0) return 'none';
    for (const up of this.connected.values()) if (!up) return 'down';
    return 'ok';
  }

  /** Calls `follower` whenever {@link state} changes, until the returned function is called. */
  onChange(follower: () => void): () => void {
    this.followers.add(follower);
    return () => this.followers.delete(follower);
  }
}

import type { TransactionCommitted } from './transaction-store.js';

/**
 * The commits one transaction store made or heard of, in order, fanned out to followers inside the process
 * (the MCP binding's resource subscriptions, the receiver's event follower; docs/acpspec-mcp.md
 * "Subscriptions"). A listener that throws does not stop the others or the commit: it is the follower's
 * fault, not the sender's.
 */
export class IngestFeed {
  private readonly listeners = new Set<(committed: TransactionCommitted) => void>();

  /** Registers a listener; returns its (idempotent) removal. */
  subscribe(listener: (committed: TransactionCommitted) => void): () => void {
    const own = (committed: TransactionCommitted): void => listener(committed);
    this.listeners.add(own);
    return () => void this.listeners.delete(own);
  }

  publish(committed: TransactionCommitted): void {
    for (const listener of this.listeners) {
      try {
        listener(committed);
      } catch {
        // A follower's failure is its own; the envelope is committed and acknowledged regardless.
      }
    }
  }

  /** The number of listeners (for tests: a closed follower leaves none behind). */
  get size(): number {
    return this.listeners.size;
  }
}

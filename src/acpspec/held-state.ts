import type { AcpState, Producer } from './envelope.js';
import type { TransactionHead } from './transaction-store.js';

/**
 * A transaction's state as this receiver holds it in memory: the head it belongs to, the header fields of
 * the receiver's state snapshot, the parsed state and the canonical text of each event (so a state request
 * composes the snapshot's bytes without serialising the stream again). Immutable: the next version shares
 * every unchanged part.
 */
export interface HeldState {
  head: TransactionHead;
  header: { acp_version: string; producer: Producer };
  state: AcpState;
  /**
   * Canonical texts of the events: the first `head.eventCount` entries (the array is shared with later
   * versions, which may have appended to it; read it through `heldEventTexts`).
   */
  eventTexts: string[];
  /** Total length of `eventTexts`, for the cache's budget. */
  eventBytes: number;
}

/** A rough size in memory: the event texts, the parsed events (about twice their text) and the body. */
function weightOf(held: HeldState): number {
  return held.eventBytes * 3 + 16 * 1024;
}

/** A least-recently-used map of held states by transaction id, bounded by an approximate byte budget. */
export interface HeldStateCache {
  get(transactionId: string): HeldState | undefined;
  set(held: HeldState): void;
  delete(transactionId: string): void;
}

/**
 * Creates the cache. Entries are checked against the store's head before they are trusted for anything but
 * an optimistic attempt (whose commit is then refused by the store's compare-and-set if the head moved).
 */
export function createHeldStateCache(budgetBytes: number): HeldStateCache {
  return new LruHeldStateCache(budgetBytes);
}

/** {@link HeldStateCache} over a `Map`, whose insertion order is the recency order. */
class LruHeldStateCache implements HeldStateCache {
  private readonly map = new Map<string, HeldState>();
  /** The summed {@link weightOf} of the entries. */
  private used = 0;

  constructor(private readonly budgetBytes: number) {}

  get(transactionId: string): HeldState | undefined {
    const held = this.map.get(transactionId);
    if (held !== undefined) {
      this.map.delete(transactionId);
      this.map.set(transactionId, held);
    }
    return held;
  }

  set(held: HeldState): void {
    this.delete(held.head.transactionId);
    this.map.set(held.head.transactionId, held);
    this.used += weightOf(held);
    for (const [id] of this.map) {
      if (this.used <= this.budgetBytes || this.map.size <= 1) break;
      this.delete(id);
    }
  }

  delete(transactionId: string): void {
    const prior = this.map.get(transactionId);
    if (prior === undefined) return;
    this.map.delete(transactionId);
    this.used -= weightOf(prior);
  }
}

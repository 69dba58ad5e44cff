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
  const map = new Map<string, HeldState>();
  let used = 0;
  const remove = (id: string): void => {
    const prior = map.get(id);
    if (prior === undefined) return;
    map.delete(id);
    used -= weightOf(prior);
  };
  return {
    get(id) {
      const held = map.get(id);
      if (held !== undefined) {
        map.delete(id);
        map.set(id, held);
      }
      return held;
    },
    set(held) {
      remove(held.head.transactionId);
      map.set(held.head.transactionId, held);
      used += weightOf(held);
      for (const [id] of map) {
        if (used <= budgetBytes || map.size <= 1) break;
        remove(id);
      }
    },
    delete: remove,
  };
}

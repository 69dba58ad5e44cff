import type { AcpState } from './envelope.js';

/** A transaction's parsed state as of one store version. */
export interface CachedState {
  version: number;
  stateEnvelopeId: string;
  state: AcpState;
}

/**
 * A least-recently-used map of parsed states by transaction id, so the receiver need not re-parse the
 * head it wrote itself. Entries are checked against the head's version before use.
 */
export function createStateCache(size: number): {
  get(id: string): CachedState | undefined;
  set(id: string, value: CachedState): void;
} {
  const map = new Map<string, CachedState>();
  return {
    get: (id) => map.get(id),
    set(id, value) {
      map.delete(id);
      map.set(id, value);
      if (map.size > size) map.delete(map.keys().next().value!);
    },
  };
}

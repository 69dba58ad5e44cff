import { systemClock, type Clock } from '../../shared/clock.js';

/**
 * Remembers single-use values (caller token `jti`s) until they expire: a value is accepted once within
 * its lifetime. One cache serves every transport of a host, so a token used over HTTP is spent on gRPC
 * and `/mcp` too.
 */
export interface ReplayCache {
  /**
   * Records `key` until `expiresAtMs`: `true` when it was not yet recorded (first use), `false` for a
   * replay — and also when the cache is full of live entries (a flood of fresh tokens cannot make room
   * by evicting the ones still to be refused).
   */
  remember(key: string, expiresAtMs: number): Promise<boolean>;
}

/** Options of {@link createMemoryReplayCache}. */
export interface MemoryReplayCacheOptions {
  /** The most live entries kept (default 100 000). */
  readonly maxEntries?: number;
  readonly clock?: Clock;
}

const DEFAULT_MAX_ENTRIES = 100_000;

/**
 * A {@link ReplayCache} in this process's memory (docs/acmp-identity.md "Callers identified by DID":
 * per host; hosts behind one load balancer each keep their own). Expired entries are dropped when the
 * cache is full, before a new one is refused.
 */
export function createMemoryReplayCache(options: MemoryReplayCacheOptions = {}): ReplayCache {
  const clock = options.clock ?? systemClock;
  const max = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const entries = new Map<string, number>();
  const prune = (now: number): void => {
    for (const [key, expiresAt] of entries) if (expiresAt <= now) entries.delete(key);
  };
  return {
    remember(key, expiresAtMs) {
      const now = clock.now();
      const seen = entries.get(key);
      if (seen !== undefined && seen > now) return Promise.resolve(false);
      if (entries.size >= max) prune(now);
      if (entries.size >= max) return Promise.resolve(false);
      entries.set(key, expiresAtMs);
      return Promise.resolve(true);
    },
  };
}

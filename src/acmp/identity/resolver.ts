import { Resolver } from 'did-resolver';
import { getResolver as keyDidMethod } from 'key-did-resolver';
import { systemClock, type Clock } from '../../shared/clock.js';
import { fetchPublicOnly } from '../../shared/public-fetch.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { DidDocumentSchema, type DidDocument } from './did-document.js';
import { webDidMethod } from './did-web.js';
import type { DidResolver } from './verify.js';

/** How long a resolved document is trusted (docs/acmp-identity.md "Revocation latency"). */
export const DEFAULT_DID_CACHE_TTL_MS = 60_000;
/** The deadline of one resolution. */
export const DEFAULT_DID_TIMEOUT_MS = 5_000;
/** A refresh asked for within this long of the last fetch is answered from the cache (no fetch storm). */
const DID_REFRESH_FLOOR_MS = 1_000;
const DEFAULT_MAX_CACHED = 1_000;
const DEFAULT_MAX_DOCUMENT_BYTES = 64 * 1024;

/** Options of {@link createDidResolver}. */
export interface DidResolverOptions {
  /** The fetch of did:web (default: the global fetch; `fetchTrusting(ca)` to trust a test CA). */
  readonly fetch?: typeof fetch;
  /**
   * Without a `fetch` of its own: resolve did:web only at public internet addresses (default false). Set
   * by servers that resolve DIDs strangers name — DID callers, escrow parties — so that a `did:web`
   * naming this host, its network or a metadata service is unresolvable (-36002) instead of fetched.
   */
  readonly publicOnly?: boolean;
  readonly timeoutMs?: number;
  /** How long a document is reused; 0 disables the cache. A retired key verifies at most this long. */
  readonly cacheTtlMs?: number;
  /** The most documents kept (the oldest go first). */
  readonly maxCached?: number;
  readonly maxDocumentBytes?: number;
  readonly clock?: Clock;
}

interface CacheEntry {
  readonly document: DidDocument;
  readonly fetchedAt: number;
}

/**
 * A DID resolver for `did:web` and `did:key` (both MUST, Layer 7 §2.1) on `did-resolver`: `did:key`
 * through `key-did-resolver`, `did:web` through {@link webDidMethod}. Every resolution has a deadline;
 * documents are cached for a bounded time (only successes); every document is checked to be a DID
 * document whose `id` is the DID asked for.
 */
export function createDidResolver(options: DidResolverOptions = {}): DidResolver {
  return new CachingDidResolver(options);
}

class CachingDidResolver implements DidResolver {
  private readonly resolver: Resolver;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly timeoutMs: number;
  private readonly maxCached: number;

  constructor(options: DidResolverOptions) {
    this.clock = options.clock ?? systemClock;
    this.ttlMs = options.cacheTtlMs ?? DEFAULT_DID_CACHE_TTL_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_DID_TIMEOUT_MS;
    this.maxCached = options.maxCached ?? DEFAULT_MAX_CACHED;
    const web = webDidMethod({
      fetch: options.fetch ?? (options.publicOnly === true ? fetchPublicOnly : fetch),
      maxBytes: options.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES,
    });
    this.resolver = new Resolver({ ...keyDidMethod(), ...web }, { cache: false });
  }

  async resolve(
    did: string,
    options: { signal?: AbortSignal; refresh?: boolean } = {},
  ): Promise<DidDocument> {
    const now = this.clock.now();
    const hit = this.cache.get(did);
    if (hit && now - hit.fetchedAt < this.ttlMs) {
      const fresh = now - hit.fetchedAt < DID_REFRESH_FLOOR_MS;
      if (options.refresh !== true || fresh) return hit.document;
    }
    const document = await this.fetchDocument(did, options.signal);
    if (this.ttlMs > 0) {
      this.cache.delete(did);
      this.cache.set(did, { document, fetchedAt: now });
      if (this.cache.size > this.maxCached) this.cache.delete(this.cache.keys().next().value as string);
    }
    return document;
  }

  private async fetchDocument(did: string, signal: AbortSignal | undefined): Promise<DidDocument> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const result = await this.resolver.resolve(did, { signal: combined });
    signal?.throwIfAborted();
    const error = result.didResolutionMetadata.error;
    if (error !== undefined || result.didDocument === null)
      throw unresolvable(deadline.aborted ? 'timeout' : (error ?? 'notFound'));
    const document = DidDocumentSchema.safeParse(result.didDocument);
    if (!document.success) throw unresolvable('invalid_document');
    if (document.data.id !== did) throw unresolvable('id_mismatch');
    return document.data;
  }
}

function unresolvable(reason: string): AcmpError {
  return new AcmpError(ACMP_CODE.didUnresolvable, { reason });
}

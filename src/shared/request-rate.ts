import { isIPv4, isIPv6 } from 'node:net';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { ANONYMOUS_IDENTITY } from './identity.js';

/** What one request amounts to under the rate: admitted, or refused until `retryAfterMs` has passed. */
export type RateVerdict =
  { readonly admitted: true } | { readonly admitted: false; readonly retryAfterMs: number };

/** A request rate per caller key, on this host (docs/host.md "Limits per caller"). */
export interface RequestLimiter {
  /** The rate: at most `requests` per `windowMs` for each key. */
  readonly requests: number;
  readonly windowMs: number;
  /** Counts one request of `key`. */
  take(key: string): Promise<RateVerdict>;
}

/**
 * A per-host request rate over rate-limiter-flexible's memory limiter: at most `requests` per key in each
 * fixed window of `windowMs`, starting at the key's first request. Per host, not shared: hosts on one
 * database each count their own requests (docs/host.md says why).
 */
export function createRequestLimiter(rate: { requests: number; windowMs: number }): RequestLimiter {
  const limiter = new RateLimiterMemory({
    points: rate.requests,
    duration: Math.max(1, Math.round(rate.windowMs / 1000)),
  });
  return {
    ...rate,
    async take(key) {
      try {
        await limiter.consume(key);
        return { admitted: true };
      } catch (refusal) {
        // The memory limiter rejects with a RateLimiterRes when the key is over its points; anything else
        // is a fault of the limiter itself, which must not turn into a refusal of every caller.
        if (!(refusal instanceof RateLimiterRes)) throw refusal;
        return { admitted: false, retryAfterMs: Math.max(1, refusal.msBeforeNext) };
      }
    },
  };
}

/**
 * The key a request is counted under: the caller's identity when its credential names one, otherwise
 * its remote address (`anonymous@<address>`): every caller of a tokenless host, and any request whose
 * credential is refused, is limited per address — an IPv4 address, or the /64 of an IPv6 one (a host
 * usually holds a whole /64; IPv4-mapped IPv6 counts as IPv4).
 */
export function rateKeyOf(identity: string | undefined, remoteAddress: string | undefined): string {
  if (identity !== undefined && identity !== ANONYMOUS_IDENTITY) return identity;
  return `${ANONYMOUS_IDENTITY}@${addressGroup(remoteAddress ?? '')}`;
}

/** An IPv4 address as it is, the first four groups of an IPv6 one; anything else as given. */
function addressGroup(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined && isIPv4(mapped)) return mapped;
  if (!isIPv6(address)) return address;
  const [head = '', tail] = (address.toLowerCase().split('%')[0] ?? '').split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

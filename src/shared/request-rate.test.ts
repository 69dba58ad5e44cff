import { describe, expect, it } from 'vitest';
import { createRequestLimiter, rateKeyOf } from './request-rate.js';

describe('rateKeyOf: what a request is counted under', () => {
  it('counts an authenticated caller by its identity, wherever it connects from', () => {
    expect(rateKeyOf('agent:a', '10.0.0.1')).toBe('agent:a');
    expect(rateKeyOf('agent:a', '10.0.0.2')).toBe('agent:a');
  });

  it('counts anonymous callers per IPv4 address (IPv4-mapped IPv6 too)', () => {
    expect(rateKeyOf(undefined, '10.0.0.1')).toBe('anonymous@10.0.0.1');
    expect(rateKeyOf('anonymous', '::ffff:10.0.0.1')).toBe('anonymous@10.0.0.1');
    expect(rateKeyOf(undefined, '10.0.0.2')).not.toBe(rateKeyOf(undefined, '10.0.0.1'));
  });

  it('counts anonymous IPv6 callers per /64, however the address is spelled', () => {
    const key = rateKeyOf(undefined, '2001:db8:0:1::5');
    expect(key).toBe('anonymous@2001:db8:0:1::/64');
    expect(rateKeyOf(undefined, '2001:0db8:0000:0001:ffff:1:2:3')).toBe(key);
    expect(rateKeyOf(undefined, '2001:db8:0:2::5')).not.toBe(key);
    expect(rateKeyOf(undefined, '::1')).toBe('anonymous@0:0:0:0::/64');
  });
});

describe('createRequestLimiter', () => {
  it('admits `requests` per key and window, then refuses with the time until the window ends', async () => {
    const limiter = createRequestLimiter({ requests: 2, windowMs: 60_000 });
    expect(await limiter.take('a')).toEqual({ admitted: true });
    expect(await limiter.take('a')).toEqual({ admitted: true });
    const refused = await limiter.take('a');
    expect(refused.admitted).toBe(false);
    expect(!refused.admitted && refused.retryAfterMs).toBeGreaterThan(59_000);
    expect(await limiter.take('b')).toEqual({ admitted: true });
  });
});

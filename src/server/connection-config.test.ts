import { describe, expect, it } from 'vitest';
import { DEFAULT_CONNECTION_LIMITS, resolveConnectionLimits } from './connection-config.js';
import { resolveHostConfig } from './config.js';

describe('connection limits (docs/host.md "Connections")', () => {
  it('defaults to the production limits', () => {
    expect(resolveHostConfig({}, {}).connections).toEqual(DEFAULT_CONNECTION_LIMITS);
  });

  it('takes a flag over its variable', () => {
    const limits = resolveConnectionLimits(
      { 'headers-timeout-ms': '2000', 'max-connections': '50' },
      { A2AC_HEADERS_TIMEOUT_MS: '3000', A2AC_GRPC_IDLE_TIMEOUT_MS: '60000' },
    );
    expect(limits).toMatchObject({ headersTimeoutMs: 2000, maxConnections: 50, grpcIdleTimeoutMs: 60000 });
  });

  it.each([
    [{ 'max-connections': '0' }, /--max-connections \/ A2AC_MAX_CONNECTIONS must be between 1 and/],
    [{ 'headers-timeout-ms': '10s' }, /--headers-timeout-ms \/ A2AC_HEADERS_TIMEOUT_MS must be an integer/],
    [{ 'headers-timeout-ms': '20000', 'request-timeout-ms': '5000' }, /must be 0 or at least/],
  ])('refuses %j with CONFIG_INVALID naming the flag', (flags, message) => {
    let error: unknown;
    try {
      resolveConnectionLimits(flags, {});
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
    expect((error as Error).message).toMatch(message);
  });

  it('allows request timeout 0 (no limit), as Node does', () => {
    expect(resolveConnectionLimits({ 'request-timeout-ms': '0' }, {}).requestTimeoutMs).toBe(0);
  });
});

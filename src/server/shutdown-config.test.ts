import { describe, expect, it } from 'vitest';
import { resolveHostConfig } from './config.js';
import { DEFAULT_SHUTDOWN, resolveShutdown } from './shutdown-config.js';

describe('shutdown settings', () => {
  it('default to no drain delay and a 5 s grace', () => {
    expect(resolveHostConfig({}, {}).shutdown).toEqual({ drainDelayMs: 0, graceMs: 5000 });
    expect(DEFAULT_SHUTDOWN).toEqual({ drainDelayMs: 0, graceMs: 5000 });
  });

  it('come from the environment, and a flag wins over its variable', () => {
    const env = { A2AC_DRAIN_DELAY_MS: '5000', A2AC_SHUTDOWN_GRACE_MS: '30000' };
    expect(resolveShutdown({}, env)).toEqual({ drainDelayMs: 5000, graceMs: 30000 });
    expect(resolveShutdown({ 'shutdown-grace-ms': '1000' }, env)).toEqual({
      drainDelayMs: 5000,
      graceMs: 1000,
    });
  });

  it('refuse a value that is not a whole number of milliseconds up to ten minutes, naming flag and variable', () => {
    expect(() => resolveShutdown({ 'drain-delay-ms': '5s' }, {})).toThrow(
      /--drain-delay-ms \/ A2AC_DRAIN_DELAY_MS must be an integer/,
    );
    expect(() => resolveShutdown({}, { A2AC_SHUTDOWN_GRACE_MS: '600001' })).toThrow(
      /--shutdown-grace-ms \/ A2AC_SHUTDOWN_GRACE_MS must be between 0 and 600000/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { systemIds, uuidv7 } from './ids.js';

describe('uuidv7 (RFC 9562 §5.7)', () => {
  it('writes the 48-bit millisecond timestamp, version 7 and the RFC variant', () => {
    const id = uuidv7(0x0123456789ab);
    expect(id).toMatch(/^01234567-89ab-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('never repeats, also across refills of the random pool', () => {
    const ids = new Set(Array.from({ length: 5000 }, () => uuidv7(1_700_000_000_000)));
    expect(ids.size).toBe(5000);
  });

  it('prefixes ids as prefix_ + 32 hex digits', () => {
    expect(systemIds.newId('task')).toMatch(/^task_[0-9a-f]{12}7[0-9a-f]{19}$/);
  });
});

import { describe, expect, it } from 'vitest';
import { errorCode, LocalError, ProtocolError } from './errors.js';

describe('errorCode', () => {
  it('reads the code of a Node system error', () => {
    const error = Object.assign(new Error('no such file'), { code: 'ENOENT' });
    expect(errorCode(error)).toBe('ENOENT');
  });

  it('reads the code of both error families', () => {
    expect(errorCode(new LocalError('TIMEOUT', 'slow'))).toBe('TIMEOUT');
    expect(errorCode(new ProtocolError('acmp', -33001, { message: 'x' }))).toBe(-33001);
  });

  it('is undefined for values without a code, null and primitives included', () => {
    expect(errorCode(new Error('plain'))).toBeUndefined();
    expect(errorCode(null)).toBeUndefined();
    expect(errorCode(undefined)).toBeUndefined();
    expect(errorCode('ENOENT')).toBeUndefined();
  });
});

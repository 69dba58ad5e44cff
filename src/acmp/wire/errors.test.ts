import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../shared/errors.js';
import { ACMP_CODE, ACMP_ERRORS, AcmpError, toAcmpErrorObject } from './errors.js';

describe('ACMP error codes (Layer 1 §3.3)', () => {
  it('lists every Layer 1 code once', () => {
    const codes = Object.values(ACMP_ERRORS).map((e) => e.code);
    expect(codes).toEqual(
      expect.arrayContaining([-33001, -33002, -33003, -33004, -33005, -33006, -33007, -33099]),
    );
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('is a ProtocolError of the acmp space with the table message', () => {
    const error = new AcmpError(ACMP_CODE.budgetExceeded, { task_id: 't' });
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.space).toBe('acmp');
    expect(error.toObject()).toEqual({ code: -33001, message: 'Budget exceeded', data: { task_id: 't' } });
  });

  it('passes an AcmpError through the mapper', () => {
    expect(toAcmpErrorObject(new AcmpError(ACMP_CODE.cancelled))).toEqual({
      code: -33004,
      message: 'Task cancelled',
    });
  });

  it('maps anything else to -33099 without leaking the message', () => {
    const mapped = toAcmpErrorObject(new Error('db password is hunter2'));
    expect(mapped).toEqual({ code: -33099, message: 'Internal provider error' });
    expect(JSON.stringify(mapped)).not.toContain('hunter2');
  });

  it('rebuilds a peer error keeping an unknown code', () => {
    const error = AcmpError.fromObject({ code: -34001, message: 'offer expired' });
    expect([error.code, error.message, error.retryable]).toEqual([-34001, 'offer expired', false]);
  });
});

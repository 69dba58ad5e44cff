import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../shared/errors.js';
import { ACP_ERRORS, AcpError, fromAcpErrorObject, toAcpErrorObject } from './errors.js';
import { parseEnvelope } from './validate.js';

describe('ACPspec error table and mapper', () => {
  it('has a status, retryability and message for every code', () => {
    for (const spec of Object.values(ACP_ERRORS)) {
      expect(spec.httpStatus).toBeGreaterThanOrEqual(400);
      expect(spec.message.length).toBeGreaterThan(0);
    }
  });

  it('passes an AcpError through with its ids and details', () => {
    const error = new AcpError('ACP_PARENT_UNKNOWN', undefined, {
      ids: { envelope_id: 'urn:uuid:a', transaction_id: 'tx-1' },
    });
    expect(toAcpErrorObject(error)).toEqual({
      code: 'ACP_PARENT_UNKNOWN',
      message: ACP_ERRORS.ACP_PARENT_UNKNOWN.message,
      envelope_id: 'urn:uuid:a',
      transaction_id: 'tx-1',
      retryable: false,
    });
  });

  it('maps anything else to ACP_INTERNAL without leaking its message', () => {
    const object = toAcpErrorObject(new Error('secret ada@example.com'));
    expect(object).toEqual({ code: 'ACP_INTERNAL', message: 'internal error', retryable: true });
  });

  it('maps a ProtocolError of another space to ACP_INTERNAL', () => {
    expect(toAcpErrorObject(new ProtocolError('acmp', -33001, { message: 'x' })).code).toBe('ACP_INTERNAL');
  });

  it('drops ids that do not look like ids', () => {
    expect(
      toAcpErrorObject(new AcpError('ACP_SCHEMA_INVALID'), { envelope_id: 'Ada Example <ada@example.com>' })
        .envelope_id,
    ).toBeUndefined();
  });

  it('lists every schema issue with its JSON Pointer and never the value', () => {
    let object;
    try {
      parseEnvelope({
        acp_version: '0.1',
        envelope_id: 'ada@example.com',
        transaction_id: 'tx',
        produced_at: 'x',
        producer: { agent_id: 'a', role: 'r' },
      });
    } catch (error) {
      object = toAcpErrorObject(error);
    }
    expect(object?.code).toBe('ACP_SCHEMA_INVALID');
    const issues = (object?.details as { issues: { pointer: string }[] }).issues;
    expect(issues.map((i) => i.pointer)).toEqual(
      expect.arrayContaining(['/envelope_id', '/produced_at', '/transaction', '/events']),
    );
    expect(JSON.stringify(object)).not.toContain('ada@example.com');
  });

  it('rebuilds a peer error object', () => {
    expect(fromAcpErrorObject({ code: 'ACP_PARENT_UNKNOWN', message: 'm' }).code).toBe('ACP_PARENT_UNKNOWN');
    expect(fromAcpErrorObject({ code: 'NOPE' }).code).toBe('ACP_INTERNAL');
  });
});

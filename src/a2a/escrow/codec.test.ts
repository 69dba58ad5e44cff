import { describe, expect, it } from 'vitest';
import { ACMP_MEDIA_TYPE } from '../../acmp/wire/constants.js';
import { ESCROW_METHOD } from '../../acmp/escrow/constants.js';
import type { InboundMessage } from '../part-codec.js';
import { readEscrowRequest } from './codec.js';

/** An inbound message carrying one ACMP data part with `data` as its root. */
function messageOf(data: unknown): InboundMessage {
  return {
    messageId: 'm1',
    taskId: '',
    contextId: '',
    role: 'user',
    parts: [{ kind: 'data', data, mediaType: ACMP_MEDIA_TYPE, metadata: undefined }],
    metadata: undefined,
    extensions: [],
  };
}

describe('readEscrowRequest (A2A binding §1)', () => {
  it('reads the method and the params of a Layer 4 request', () => {
    const params = { escrow_id: 'esc-1' };
    expect(readEscrowRequest(messageOf({ acmp_method: ESCROW_METHOD.status, params }), '1.0')).toEqual({
      method: ESCROW_METHOD.status,
      params,
    });
  });

  it.each([
    ['a list', ['esc-1']],
    ['an object holding a value JSON cannot carry', { escrow_id: 'esc-1', at: 1n }],
    ['an object holding undefined', { escrow_id: 'esc-1', proof: undefined }],
  ])('refuses params that are %s with -32600', (_, params) => {
    let refused: unknown;
    try {
      readEscrowRequest(messageOf({ acmp_method: ESCROW_METHOD.status, params }), '1.0');
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({
      code: -32600,
      data: { detail: 'root must be exactly {acmp_method, params}' },
    });
  });
});

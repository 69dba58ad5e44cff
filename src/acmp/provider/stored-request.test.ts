import { describe, expect, it } from 'vitest';
import { decodeInvokeRequest, encodeInvokeRequest } from './stored-request.js';

describe('the stored request of an invoke received outside A2A (ACMP JSON-RPC form)', () => {
  const params = {
    task_id: 'task_1',
    capability: 'echo',
    input: { type: 'text', data: 'x' },
    vendor_field: { kept: true },
  };

  it('reads back the params it stored, unknown fields included', () => {
    expect(decodeInvokeRequest(encodeInvokeRequest(params))).toEqual(params);
  });

  it.each([
    ['empty text', ''],
    ['not JSON', '{'],
    ['an A2A message', JSON.stringify({ messageId: 'm1', role: 'ROLE_USER', parts: [] })],
    ['another method', JSON.stringify({ method: 'acmp/cancel', params: { task_id: 'task_1' } })],
    ['params the schema refuses', JSON.stringify({ method: 'acmp/invoke', params: { task_id: 1 } })],
    ['null', 'null'],
  ])('is undefined for %s', (_, text) => {
    expect(decodeInvokeRequest(text)).toBeUndefined();
  });
});

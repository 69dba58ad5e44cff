import { describe, expect, it } from 'vitest';
import { envelopeIdFor, snapshot } from '../../test/helpers/acp-builders.js';
import { parseAck, parseEvent, parseEventPage, parseStateAnswer } from './replies.js';
import { errorCode } from '../shared/errors.js';

const ack = { envelope_id: envelopeIdFor(1), transaction_id: 'tx-1', state_envelope_id: envelopeIdFor(2) };
const code = (fn: () => unknown): unknown => {
  try {
    fn();
    return 'no error';
  } catch (error) {
    return errorCode(error);
  }
};

describe('replies from peers are decoded, not cast (docs/acpspec-core.md "Envelope types and decoding")', () => {
  it('accepts an ack and keeps only its three ids', () => {
    expect(parseAck({ ...ack, extra: 1 })).toEqual(ack);
  });

  it('refuses an ack that is not one', () => {
    expect(code(() => parseAck({ ...ack, state_envelope_id: 7 }))).toBe('ACP_MESSAGE_NONCONFORMANT');
    expect(code(() => parseAck({ envelope_id: ack.envelope_id }))).toBe('ACP_MESSAGE_NONCONFORMANT');
    expect(code(() => parseAck('ok'))).toBe('ACP_MESSAGE_NONCONFORMANT');
  });

  it('refuses a state answer for another transaction or a malformed event page', () => {
    expect(parseStateAnswer(snapshot(), 'tx-1').transaction_id).toBe('tx-1');
    expect(code(() => parseStateAnswer(snapshot(), 'tx-2'))).toBe('ACP_MESSAGE_NONCONFORMANT');
    expect(code(() => parseEventPage({ events: [{ event_id: 'e' }] }))).toBe('ACP_MESSAGE_NONCONFORMANT');
    expect(code(() => parseEventPage({ events: [], next: -1 }))).toBe('ACP_MESSAGE_NONCONFORMANT');
    expect(code(() => parseEvent(null))).toBe('ACP_MESSAGE_NONCONFORMANT');
  });
});

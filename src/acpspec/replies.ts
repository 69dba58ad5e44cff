import type { AcpEvent, SnapshotEnvelope } from './envelope.js';
import { isSnapshot } from './envelope.js';
import { AcpError } from './errors.js';
import { isAcpEvent, parseEnvelope } from './validate.js';

export { parseAck } from './validate.js';

/**
 * Decodes a peer's answer to a state request: a schema-valid snapshot of the transaction asked for
 * (docs/acpspec-binding.md "A2A binding": never a delta).
 * @throws AcpError `ACP_SCHEMA_INVALID` (not an envelope) or `ACP_MESSAGE_NONCONFORMANT` (a delta, or
 *   another transaction's state).
 */
export function parseStateAnswer(value: unknown, transactionId: string): SnapshotEnvelope {
  const answer = parseEnvelope(value);
  if (!isSnapshot(answer))
    throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'state request answered with a delta');
  if (answer.transaction_id !== transactionId)
    throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'state answer names another transaction');
  return answer;
}

/**
 * Decodes one event a peer sent (a page entry or a followed event).
 * @throws AcpError `ACP_MESSAGE_NONCONFORMANT` when it is not a schema-valid event.
 */
export function parseEvent(value: unknown): AcpEvent {
  if (!isAcpEvent(value))
    throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'the receiver answered with a malformed event');
  return value;
}

/**
 * Decodes an events page `{events, next?}`.
 * @throws AcpError `ACP_MESSAGE_NONCONFORMANT`.
 */
export function parseEventPage(value: Record<string, unknown>): { events: AcpEvent[]; next?: number } {
  const { events, next } = value;
  if (
    !Array.isArray(events) ||
    (next !== undefined && !(typeof next === 'number' && Number.isSafeInteger(next) && next >= 0))
  ) {
    throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'the receiver answered with a malformed events page');
  }
  return { events: events.map(parseEvent), ...(next === undefined ? {} : { next }) };
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup } from '../helpers/host.js';
import {
  dataPart,
  errorCode,
  freshSnapshot,
  rpc,
  sendRaw,
  startAcpHost,
  txId,
  userMessage,
  type AcpTestHost,
} from './helpers.js';

let host: AcpTestHost;
beforeAll(async () => {
  host = await startAcpHost();
});
afterAll(cleanup);

/** Sends a message and says who answered: the host's plain executor (a task) or a binding (a message). */
async function answeredBy(message: Record<string, unknown>): Promise<'executor' | 'binding'> {
  const before = host.a2aCalls.length;
  const answer = await rpc(host, 'SendMessage', { message });
  expect(answer.body.error).toBeUndefined();
  const byBinding = host.a2aCalls.length > before;
  expect(byBinding).toBe(answer.body.result?.['task'] === undefined);
  return byBinding ? 'binding' : 'executor';
}

describe('which messages the ACPspec binding claims (design "A2A binding")', () => {
  it.each([
    [
      'a text message with metadata {transaction_id}',
      userMessage([{ text: 'hello' }], { transaction_id: 'abc' }),
    ],
    ['a data part {quote: "to be or not"}', userMessage([{ data: { quote: 'to be or not' } }])],
    [
      'a data part with events and parties of its own',
      userMessage([{ data: { events: ['launch'], parties: ['us', 'them'], transaction_id: 't-1' } }]),
    ],
  ])('leaves %s to the host executor', async (_label, message) => {
    expect(await answeredBy(message)).toBe('executor');
  });

  it('claims an envelope without a media type (v0.3 data parts have none) by acp_version and envelope_id', async () => {
    const envelope = freshSnapshot(txId('no-media-type'));
    expect(await answeredBy(userMessage([{ data: envelope }]))).toBe('binding');
    const reply = await sendRaw(host, userMessage([{ data: freshSnapshot(txId('no-media-type')) }]));
    expect(reply['acp_ack']).toBeDefined();
  });

  it('claims, and refuses, a strong marker flattened into metadata next to an ordinary part', async () => {
    const { acp_version, envelope_id } = freshSnapshot(txId('flat-marker'));
    const message = userMessage([{ text: 'see metadata' }], { acp_version, envelope_id });
    expect(await answeredBy(message)).toBe('binding');
    expect(errorCode(await sendRaw(host, message))).toBe('ACP_MESSAGE_NONCONFORMANT');
  });

  it('claims anything labelled application/acp+json, even without ACPspec keys', async () => {
    const message = userMessage([dataPart({ quote: 'to be or not' })]);
    expect(await answeredBy(message)).toBe('binding');
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { ACP_MEDIA_TYPE } from '../../src/acpspec/constants.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { freshSnapshot, startAcpHost, txId, type AcpTestHost } from '../acpspec/helpers.js';
import { anonymousState, SENDER_AGENT_ID } from '../helpers/acp-builders.js';
import { cleanup } from '../helpers/host.js';
import { replyProblems, sendRaw, type RawReply } from '../helpers/wire-reply.js';

afterEach(cleanup);

const PLACEHOLDER = '"__value__"';

/** A snapshot envelope as text whose one event's `data.x` is `value`, spliced in verbatim. */
function envelopeWith(value: string): string {
  const event = {
    event_id: 'e1',
    type: 'lead.created',
    occurred_at: '2025-06-01T12:00:00Z',
    actor: SENDER_AGENT_ID,
    subject: '/transaction',
    data: { x: '__value__' },
  };
  const envelope = freshSnapshot(txId('bad'), anonymousState({ events: [event] }));
  return canonicalJson(envelope).replace(PLACEHOLDER, value);
}

function postHttps(host: AcpTestHost, body: string): Promise<RawReply> {
  return sendRaw(
    `${host.url}/acp/v0.1/envelopes`,
    { body, headers: { 'content-type': ACP_MEDIA_TYPE } },
    host.fetch,
  );
}

/** The same envelope text as the one data part of a v1.0 JSON-RPC SendMessage. */
function postA2A(host: AcpTestHost, envelope: string): Promise<RawReply> {
  const message = `{"messageId":"${crypto.randomUUID()}","role":"ROLE_USER","parts":[{"mediaType":"${ACP_MEDIA_TYPE}","data":${envelope}}]}`;
  const body = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":${message}}}`;
  return sendRaw(`${host.url}/a2a/jsonrpc`, { body, headers: { 'A2A-Version': '1.0' } }, host.fetch);
}

const BAD_VALUES: [string, string][] = [
  ['a number beyond a double (1e309)', '1e309'],
  ['an integer above 2^53 (rounded by JSON.parse)', '9007199254740993'],
  ['a lone surrogate', '"\\ud800"'],
  ['U+0000', '"a\\u0000b"'],
  ['10,000-deep nesting', '['.repeat(10_000) + ']'.repeat(10_000)],
];

describe('ACPspec envelopes outside the JSON edge profile (docs/host.md "Bad input")', () => {
  it.each(BAD_VALUES)(
    'refuses %s over HTTPS with 400 ACP_SCHEMA_INVALID, not retryable',
    async (_label, value) => {
      const host = await startAcpHost();
      const reply = await postHttps(host, envelopeWith(value));
      expect(replyProblems(reply)).toEqual([]);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ acp_error: { code: 'ACP_SCHEMA_INVALID', retryable: false } });
      const after = await postHttps(host, envelopeWith('1'));
      expect(after.status).toBe(200);
    },
  );

  it.each(BAD_VALUES)('refuses %s over A2A with -32602, never ACP_INTERNAL', async (_label, value) => {
    const host = await startAcpHost();
    const reply = await postA2A(host, envelopeWith(value));
    expect(replyProblems(reply)).toEqual([]);
    expect((reply.body as { error?: { code: number } }).error?.code).toBe(-32602);
    const after = await postA2A(host, envelopeWith('1'));
    expect(after.text).toContain('acp_ack');
  });

  it('answers an undecodable transaction id in the path (%ZZ) with a coded 400', async () => {
    const host = await startAcpHost();
    const reply = await sendRaw(`${host.url}/acp/v0.1/transactions/%ZZ/state`, {}, host.fetch);
    expect(replyProblems(reply)).toEqual([]);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ acp_error: { code: 'ACP_MESSAGE_NONCONFORMANT', retryable: false } });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acpPeerOf, createAcpClient } from '../../src/a2a/acp/client.js';
import { fetchAgentCard } from '../../src/a2a/client.js';
import {
  ACP_EXTENSION_URI,
  ACP_KINDS,
  ACP_MEDIA_TYPE,
  ACP_SCHEMA_PATH,
} from '../../src/acpspec/constants.js';
import { isSnapshot, type SnapshotEnvelope } from '../../src/acpspec/envelope.js';
import { ACP_ENVELOPE_SCHEMA } from '../../src/acpspec/schema.js';
import { checkEnvelope } from '../../src/acpspec/validate.js';
import { eventOp } from '../helpers/acp-builders.js';
import { cleanup } from '../helpers/host.js';
import {
  codeOf,
  dataPart,
  errorCode,
  freshDelta,
  freshSnapshot,
  replyData,
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

/** Asserts that nothing of the transaction reached storage. */
async function expectUnknown(transactionId: string): Promise<void> {
  expect(await codeOf(host.http.state(transactionId))).toBe('ACP_TRANSACTION_UNKNOWN');
}

describe('One Envelope, One DataPart (seed; design "A2A binding")', () => {
  it('acknowledges one envelope carried as one data part', async () => {
    const envelope = freshSnapshot(txId('one'));
    const reply = await sendRaw(host, userMessage([dataPart(envelope)]));
    expect(reply['acp_ack']).toMatchObject({
      envelope_id: envelope.envelope_id,
      transaction_id: envelope.transaction_id,
    });
  });

  it('rejects two envelopes in one message as ACP_MESSAGE_NONCONFORMANT', async () => {
    const first = freshSnapshot(txId('two'));
    const second = freshSnapshot(txId('two'));
    const reply = await sendRaw(host, userMessage([dataPart(first), dataPart(second)]));
    expect(errorCode(reply)).toBe('ACP_MESSAGE_NONCONFORMANT');
    await expectUnknown(first.transaction_id);
    await expectUnknown(second.transaction_id);
  });

  it('rejects two envelopes in one data part (an array) as ACP_MESSAGE_NONCONFORMANT', async () => {
    const first = freshSnapshot(txId('array'));
    const reply = await sendRaw(host, userMessage([dataPart([first, freshSnapshot(txId('array'))])]));
    expect(errorCode(reply)).toBe('ACP_MESSAGE_NONCONFORMANT');
    await expectUnknown(first.transaction_id);
  });

  it('rejects an envelope split across two data parts as ACP_MESSAGE_NONCONFORMANT', async () => {
    const { acp_version, envelope_id, transaction_id, produced_at, producer, ...objects } = freshSnapshot(
      txId('split'),
    );
    const header = { acp_version, envelope_id, transaction_id, produced_at, producer };
    const reply = await sendRaw(host, userMessage([dataPart(header), dataPart(objects)]));
    expect(errorCode(reply)).toBe('ACP_MESSAGE_NONCONFORMANT');
    await expectUnknown(transaction_id);
  });

  it('rejects envelope fields flattened into message metadata as ACP_MESSAGE_NONCONFORMANT', async () => {
    const { envelope_id, transaction_id, ...rest } = freshSnapshot(txId('flat'));
    const reply = await sendRaw(host, userMessage([dataPart(rest)], { envelope_id, transaction_id }));
    expect(errorCode(reply)).toBe('ACP_MESSAGE_NONCONFORMANT');
    await expectUnknown(transaction_id);
  });

  it('rejects an envelope next to a text part as ACP_MESSAGE_NONCONFORMANT', async () => {
    const envelope = freshSnapshot(txId('text'));
    const reply = await sendRaw(host, userMessage([dataPart(envelope), { text: 'here is the deal' }]));
    expect(errorCode(reply)).toBe('ACP_MESSAGE_NONCONFORMANT');
    await expectUnknown(envelope.transaction_id);
  });

  it('rejects an envelope sent as a text part (not kind data) as ACP_MESSAGE_NONCONFORMANT', async () => {
    const envelope = freshSnapshot(txId('as-text'));
    const reply = await sendRaw(
      host,
      userMessage([{ text: JSON.stringify(envelope), mediaType: ACP_MEDIA_TYPE }]),
    );
    expect(errorCode(reply)).toBe('ACP_MESSAGE_NONCONFORMANT');
    await expectUnknown(envelope.transaction_id);
  });

  it('does not need the extension activated, and echoes it when asked (A2A §4.6)', async () => {
    const res = await host.fetch(`${host.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'A2A-Version': '1.0',
        'A2A-Extensions': ACP_EXTENSION_URI,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: userMessage([dataPart(freshSnapshot(txId('ext')))]) },
      }),
    });
    expect(res.headers.get('a2a-extensions')).toBe(ACP_EXTENSION_URI);
    expect(
      replyData(((await res.json()) as { result: { message: unknown } }).result.message)['acp_ack'],
    ).toBeDefined();
  });
});

describe('v1.0 and v0.3 clients (issue: both work)', () => {
  it('accepts a v0.3 client sending kind "data" over message/send without A2A-Version', async () => {
    const envelope = freshSnapshot(txId('v03-raw'));
    const message = {
      kind: 'message',
      messageId: crypto.randomUUID(),
      role: 'user',
      parts: [{ kind: 'data', data: envelope }],
    };
    const answer = await rpc(host, 'message/send', { message }, '0.3');
    expect(answer.body.error).toBeUndefined();
    const reply = answer.body.result as {
      kind?: string;
      parts: { kind?: string; data: Record<string, unknown> }[];
    };
    expect(reply.parts[0]!.kind).toBe('data');
    expect(reply.parts[0]!.data['acp_ack']).toMatchObject({ envelope_id: envelope.envelope_id });
  });

  it.each([
    ['1.0', 'JSONRPC'],
    ['1.0', 'HTTP+JSON'],
    ['0.3', 'JSONRPC'],
    ['0.3', 'HTTP+JSON'],
  ] as const)(
    'sends and reads state through the SDK client (A2A %s, %s)',
    async (protocolVersion, transport) => {
      const client = await createAcpClient({
        agentUrl: host.url,
        caCert: host.caCert,
        protocolVersion,
        transport,
      });
      const envelope = freshSnapshot(txId(`sdk-${protocolVersion}`));
      const ack = await client.send(envelope);
      expect(ack.envelope_id).toBe(envelope.envelope_id);
      const state = await client.requestState(envelope.transaction_id);
      expect(state.envelope_id).toBe(ack.state_envelope_id);
    },
  );
});

describe('state request (seed "Two Agents Meet": a snapshot or an error, never a delta)', () => {
  it('answers with a snapshot after deltas were ingested', async () => {
    const client = await createAcpClient({ agentUrl: host.url, caCert: host.caCert });
    const first = freshSnapshot(txId('state'));
    await client.send(first);
    const one = freshDelta(first, [eventOp('ev-s-1')]);
    await client.send(one);
    const last = await client.send(freshDelta(one, [eventOp('ev-s-2')]));
    const reply = await sendRaw(
      host,
      userMessage([dataPart({ acp_state_request: { transaction_id: first.transaction_id } })]),
    );
    const answer = reply as unknown as SnapshotEnvelope;
    expect(answer).not.toHaveProperty('parent_envelope_id');
    expect(answer).not.toHaveProperty('patch');
    expect(checkEnvelope(answer).ok).toBe(true);
    expect(isSnapshot(answer)).toBe(true);
    expect(answer.envelope_id).toBe(last.state_envelope_id);
    expect(answer.events.map((e) => e.event_id)).toEqual(expect.arrayContaining(['ev-s-1', 'ev-s-2']));
  });

  it('answers an unknown transaction with an error object (ACP_TRANSACTION_UNKNOWN)', async () => {
    const reply = await sendRaw(
      host,
      userMessage([dataPart({ acp_state_request: { transaction_id: txId('nobody') } })]),
    );
    expect(errorCode(reply)).toBe('ACP_TRANSACTION_UNKNOWN');
  });

  it('rejects a state request with extra members as ACP_MESSAGE_NONCONFORMANT', async () => {
    const reply = await sendRaw(
      host,
      userMessage([dataPart({ acp_state_request: { transaction_id: 'tx-1' }, envelope_id: 'x' })]),
    );
    expect(errorCode(reply)).toBe('ACP_MESSAGE_NONCONFORMANT');
  });
});

describe('card params (seed "Declaring Support in the Agent Card")', () => {
  it('declares acp_version and non-empty accepts and emits', async () => {
    const card = await fetchAgentCard(host.url, { caCert: host.caCert });
    const extension = card.capabilities?.extensions.find((e) => e.uri === ACP_EXTENSION_URI);
    expect(extension).toBeDefined();
    expect(extension?.required ?? false).toBe(false);
    const peer = acpPeerOf(card);
    expect(peer.acp_version).toBe('0.1');
    for (const kinds of [peer.accepts, peer.emits]) {
      expect(kinds.length).toBeGreaterThan(0);
      for (const kind of kinds) expect(ACP_KINDS).toContain(kind);
    }
  });

  it('names a schema_url that resolves to the envelope JSON Schema', async () => {
    const { schema_url } = acpPeerOf(await fetchAgentCard(host.url, { caCert: host.caCert }));
    expect(schema_url).toBe(`${host.url}${ACP_SCHEMA_PATH}`);
    const res = await host.fetch(schema_url);
    expect(res.status).toBe(200);
    const schema = (await res.json()) as Record<string, unknown>;
    expect(schema).toEqual(ACP_ENVELOPE_SCHEMA);
    expect(schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
  });
});

import { describe, expect, it } from 'vitest';
import { MemoryTransactionStore } from '../../src/storage/memory/acp-transaction-store-memory.js';
import {
  anonymousState,
  delta,
  eventOp,
  fixedClock,
  producer,
  RECEIVER_AGENT_ID,
  sequentialIds,
  snapshot,
} from '../helpers/acp-builders.js';
import type { Kind } from '../../src/acpspec/constants.js';
import type { Envelope } from '../../src/acpspec/envelope.js';
import { isAcpError } from '../../src/acpspec/errors.js';
import { createAcpReceiver, type AcpReceiver } from '../../src/acpspec/receiver.js';
import { createAcpSenderCore, type AcpSenderTransport } from '../../src/acpspec/sender.js';

function loopback(receiver: AcpReceiver, secure = true): AcpSenderTransport & { sent: Envelope[] } {
  const sent: Envelope[] = [];
  return {
    secure,
    sent,
    send: (envelope, bytes) => {
      sent.push(envelope);
      return receiver.ingest(JSON.parse(bytes.toString('utf8')), { secure });
    },
    requestState: async (id) => (await receiver.state(id)).envelope,
  };
}

function setup(options: { peerAccepts?: Kind[]; selfEmits?: Kind[]; secure?: boolean } = {}) {
  const receiver = createAcpReceiver({
    store: new MemoryTransactionStore(),
    accepts: options.peerAccepts ?? ['snapshot', 'delta'],
    receiverAgentId: RECEIVER_AGENT_ID,
    producer: { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' },
    clock: fixedClock(),
    ids: sequentialIds(0x9000),
  });
  const transport = loopback(receiver, options.secure ?? true);
  const sender = createAcpSenderCore({
    transport,
    peer: { accepts: options.peerAccepts ?? ['snapshot', 'delta'], emits: ['snapshot'], acp_version: '0.1' },
    self: { emits: options.selfEmits ?? ['snapshot', 'delta'] },
    clock: fixedClock(),
    ids: sequentialIds(0x5000),
  });
  return { receiver, transport, sender };
}
const codeOf = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => 'sent',
    (e: unknown) => (isAcpError(e) ? e.code : e),
  );

describe('ACPspec sender core', () => {
  it('refuses a kind the peer does not accept, before sending', async () => {
    const { sender, transport } = setup({ peerAccepts: ['snapshot'] });
    expect(await codeOf(sender.send(delta(snapshot(), [eventOp('e')])))).toBe('ACP_KIND_NOT_ACCEPTED');
    expect(transport.sent).toHaveLength(0);
  });

  it('never emits a kind it did not declare', async () => {
    const { sender } = setup({ selfEmits: ['snapshot'] });
    expect(await codeOf(sender.send(delta(snapshot(), [eventOp('e')])))).toBe('ACP_KIND_NOT_ACCEPTED');
  });

  it('refuses personal data over a non-TLS transport', async () => {
    const { sender, transport } = setup({ secure: false });
    expect(await codeOf(sender.send(snapshot()))).toBe('ACP_TRANSPORT_INSECURE');
    expect(transport.sent).toHaveLength(0);
    expect(await codeOf(sender.send(snapshot({ state: anonymousState() })))).toBe('sent');
  });

  it('answers ACP_PARENT_UNKNOWN with one snapshot of the held delta result', async () => {
    const { sender, transport, receiver } = setup();
    const deliver = transport.send.bind(transport);
    // The first snapshot goes to "another host": the peer never sees it.
    transport.send = (envelope) => {
      transport.send = deliver;
      return Promise.resolve({
        envelope_id: envelope.envelope_id,
        transaction_id: envelope.transaction_id,
        state_envelope_id: envelope.envelope_id,
      });
    };
    await sender.send(snapshot());
    const ack = await sender.send(delta(snapshot(), [eventOp('ev-2')]));
    expect(transport.sent.map((e) => (e.parent_envelope_id === undefined ? 'snapshot' : 'delta'))).toEqual([
      'delta',
      'snapshot',
    ]);
    expect(ack.envelope_id).toBe(transport.sent[1]?.envelope_id);
    expect((await receiver.state('tx-1')).envelope.events.map((e) => e.event_id)).toContain('ev-2');
    expect(sender.held('tx-1')?.envelopeId).toBe(ack.envelope_id);
  });

  it('uses snapshotFor when it does not hold the parent state', async () => {
    const { transport } = setup();
    const state = anonymousState();
    const core = createAcpSenderCore({
      transport,
      peer: { accepts: ['snapshot', 'delta'], emits: [], acp_version: '0.1' },
      self: { emits: ['snapshot', 'delta'] },
      snapshotFor: () => Promise.resolve(state),
    });
    await core.send(delta(snapshot(), [eventOp('ev-2')]));
    expect(transport.sent.map((e) => (e.parent_envelope_id === undefined ? 'snapshot' : 'delta'))).toEqual([
      'delta',
      'snapshot',
    ]);
  });

  it('rethrows ACP_PARENT_UNKNOWN when it cannot build a snapshot', async () => {
    const { sender } = setup();
    expect(await codeOf(sender.send(delta(snapshot(), [eventOp('ev-2')])))).toBe('ACP_PARENT_UNKNOWN');
  });

  it('chains deltas on its own head with sendDelta', async () => {
    const { sender, transport } = setup();
    await sender.send(snapshot());
    await sender.sendDelta('tx-1', [eventOp('ev-2')], producer());
    await sender.sendDelta('tx-1', [eventOp('ev-3')], producer());
    expect(transport.sent[2]?.parent_envelope_id).toBe(transport.sent[1]?.envelope_id);
  });

  it('sends a snapshot from sendDelta when the peer takes snapshots only', async () => {
    const { sender, transport } = setup({ peerAccepts: ['snapshot'] });
    await sender.send(snapshot());
    await sender.sendDelta('tx-1', [eventOp('ev-2')], producer());
    expect(transport.sent[1]?.parent_envelope_id).toBeUndefined();
    expect(sender.held('tx-1')?.state.events.map((e) => e.event_id)).toContain('ev-2');
  });

  it('returns the peer state as a snapshot and rejects a delta answer', async () => {
    const { sender, transport } = setup();
    await sender.send(snapshot());
    expect((await sender.requestState('tx-1')).parent_envelope_id).toBeUndefined();
    transport.requestState = () => Promise.resolve(delta(snapshot(), [eventOp('x')]));
    expect(await codeOf(sender.requestState('tx-1'))).toBe('ACP_MESSAGE_NONCONFORMANT');
  });
});

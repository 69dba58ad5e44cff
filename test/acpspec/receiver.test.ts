import { describe, expect, it } from 'vitest';
import { MemoryTransactionStore } from '../../src/storage/memory/acp-transaction-store-memory.js';
import {
  delta,
  envelopeIdFor,
  eventOp,
  fixedClock,
  grant,
  leadState,
  RECEIVER_AGENT_ID,
  sequentialIds,
  snapshot,
  BUYER,
  anonymousState,
} from '../helpers/acp-builders.js';
import { isAcpError } from '../../src/acpspec/errors.js';
import { createAcpReceiver } from '../../src/acpspec/receiver.js';
import type { TransactionStore } from '../../src/acpspec/transaction-store.js';

function setup(store: TransactionStore = new MemoryTransactionStore()) {
  return createAcpReceiver({
    store,
    accepts: ['snapshot', 'delta'],
    receiverAgentId: RECEIVER_AGENT_ID,
    producer: { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' },
    clock: fixedClock(),
    ids: sequentialIds(),
  });
}
const tls = { secure: true };
const codeOf = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => 'accepted',
    (e: unknown) => (isAcpError(e) ? e.code : e),
  );

describe('ACPspec receiver', () => {
  it('materialises a state snapshot produced by the receiver', async () => {
    const receiver = setup();
    const ack = await receiver.ingest(snapshot(), tls);
    const { envelope } = await receiver.state('tx-1');
    expect(envelope.envelope_id).toBe(ack.state_envelope_id);
    expect(envelope.envelope_id).not.toBe(ack.envelope_id);
    expect(envelope.producer.agent_id).toBe(RECEIVER_AGENT_ID);
  });

  it('acknowledges the same envelope twice without storing it again', async () => {
    const receiver = setup();
    const first = await receiver.ingest(snapshot(), tls);
    const before = (await receiver.events('tx-1')).events.length;
    expect(await receiver.ingest(snapshot(), tls)).toEqual(first);
    expect((await receiver.events('tx-1')).events).toHaveLength(before);
  });

  it('acknowledges a replayed delta even after the head moved', async () => {
    const receiver = setup();
    await receiver.ingest(snapshot(), tls);
    const d = delta(snapshot(), [eventOp('ev-2')]);
    const ack = await receiver.ingest(d, tls);
    await receiver.ingest(
      delta({ envelope_id: d.envelope_id, transaction_id: 'tx-1' }, [eventOp('ev-3')], {
        envelope_id: envelopeIdFor(3),
      }),
      tls,
    );
    expect(await receiver.ingest(d, tls)).toEqual(ack);
  });

  it('accepts a delta on the state snapshot id as parent', async () => {
    const receiver = setup();
    const ack = await receiver.ingest(snapshot(), tls);
    const d = delta({ envelope_id: ack.state_envelope_id, transaction_id: 'tx-1' }, [eventOp('ev-2')]);
    expect(await codeOf(receiver.ingest(d, tls))).toBe('accepted');
  });

  it('rejects a delta on a known but superseded parent with the head in details', async () => {
    const receiver = setup();
    await receiver.ingest(snapshot(), tls);
    const ack = await receiver.ingest(delta(snapshot(), [eventOp('ev-2')]), tls);
    const error = await receiver
      .ingest(delta(snapshot(), [eventOp('ev-3')], { envelope_id: envelopeIdFor(3) }), tls)
      .catch((e: unknown) => e);
    expect(isAcpError(error, 'ACP_ENVELOPE_CONFLICT') && error.data).toEqual({
      head_envelope_id: ack.envelope_id,
      state_envelope_id: ack.state_envelope_id,
    });
  });

  it('lets only one of two concurrent deltas on the same parent win', async () => {
    const receiver = setup();
    await receiver.ingest(snapshot(), tls);
    const results = await Promise.all(
      [2, 3].map((n) =>
        codeOf(
          receiver.ingest(delta(snapshot(), [eventOp(`ev-${n}`)], { envelope_id: envelopeIdFor(n) }), tls),
        ),
      ),
    );
    expect(results.sort()).toEqual(['ACP_ENVELOPE_CONFLICT', 'accepted']);
  });

  it('keeps held events when a later snapshot omits them', async () => {
    const receiver = setup();
    await receiver.ingest(snapshot(), tls);
    const later = snapshot({
      envelope_id: envelopeIdFor(5),
      state: leadState({
        events: [
          {
            event_id: 'ev-new',
            type: 'note.added',
            occurred_at: '2025-06-01T12:10:00Z',
            actor: 'a',
            subject: '/transaction',
            data: {},
          },
        ],
      }),
    });
    await receiver.ingest(later, tls);
    const { envelope } = await receiver.state('tx-1');
    const inbound = envelope.events.filter((e) => !e.type.startsWith('consent.'));
    expect(inbound.map((e) => e.event_id)).toEqual(['ev-lead-1', 'ev-new']);
  });

  it('keeps the held consent over a raise and records a consent.conflict event', async () => {
    const receiver = setup();
    await receiver.ingest(
      snapshot({
        state: leadState({
          consent: { [BUYER]: { data_sharing: grant(), marketing: grant({ state: 'denied' }) } },
        }),
      }),
      tls,
    );
    await receiver.ingest(snapshot({ envelope_id: envelopeIdFor(5) }), tls);
    const { envelope } = await receiver.state('tx-1');
    expect(envelope.consent[BUYER]?.marketing?.state).toBe('denied');
    const conflict = envelope.events.find((e) => e.type === 'consent.conflict');
    expect(conflict?.data).toMatchObject({
      held: 'denied',
      asserted: 'limited',
      envelope_id: envelopeIdFor(5),
    });
    expect(conflict?.actor).toBe(RECEIVER_AGENT_ID);
  });

  it('stores nothing when consent is missing', async () => {
    const receiver = setup();
    expect(await codeOf(receiver.ingest(snapshot({ state: leadState({ consent: {} }) }), tls))).toBe(
      'ACP_CONSENT_REQUIRED',
    );
    expect(await codeOf(receiver.state('tx-1'))).toBe('ACP_TRANSACTION_UNKNOWN');
  });

  it('attaches the envelope and transaction ids to a rejection', async () => {
    const receiver = setup();
    const error = await receiver.ingest(snapshot(), { secure: false }).catch((e: unknown) => e);
    expect(isAcpError(error, 'ACP_TRANSPORT_INSECURE') && error.ids).toEqual({
      envelope_id: envelopeIdFor(1),
      transaction_id: 'tx-1',
    });
  });

  it('pages events with a next cursor', async () => {
    const receiver = setup();
    await receiver.ingest(snapshot({ state: anonymousState() }), tls);
    await receiver.ingest(delta(snapshot(), [eventOp('ev-2'), eventOp('ev-3')]), tls);
    const page = await receiver.events('tx-1', { after: 0, limit: 2 });
    expect(page.next).toBe(2);
    expect((await receiver.events('tx-1', { after: 2 })).events.map((e) => e.event_id)).toEqual(['ev-3']);
  });

  it('follows the stream across writers until aborted', async () => {
    const store = new MemoryTransactionStore();
    const reader = setup(store);
    const writer = setup(store);
    await writer.ingest(snapshot({ state: anonymousState() }), tls);
    const controller = new AbortController();
    const seen: string[] = [];
    for await (const event of reader.follow('tx-1', { signal: controller.signal, pollMs: 1 })) {
      seen.push(`${event.seq}:${event.event_id}`);
      if (event.seq === 1) await writer.ingest(delta(snapshot(), [eventOp('ev-2')]), tls);
      if (event.seq === 2) controller.abort();
    }
    expect(seen).toEqual(['1:ev-lead-1', '2:ev-2']);
  });

  it('refuses to follow an unknown transaction', async () => {
    const iterator = setup()
      .follow('tx-none', { signal: new AbortController().signal })
      [Symbol.asyncIterator]();
    expect(await codeOf(iterator.next())).toBe('ACP_TRANSACTION_UNKNOWN');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { applyDelta } from '../../src/acpspec/delta.js';
import {
  buildSnapshot,
  newEnvelopeId,
  stateOf,
  type AcpState,
  type DeltaEnvelope,
} from '../../src/acpspec/envelope.js';
import type { TransactionStore } from '../../src/acpspec/transaction-store.js';
import { KyselyTransactionStore } from '../../src/storage/acpspec/acp-transaction-store-kysely.js';
import { eventOp, leadState, producer } from '../helpers/acp-builders.js';
import { cleanup } from '../helpers/host.js';
import { codeOf, freshDelta, startAcpHost, txId, type AcpTestHost } from './helpers.js';

let host: AcpTestHost;
let store: TransactionStore;
beforeAll(async () => {
  host = await startAcpHost();
  store = new KyselyTransactionStore(host.database!);
});
afterAll(cleanup);

/** The envelopes (ids) the receiver's binding was handed for one transaction, in order. */
function callsFor(transactionId: string): string[] {
  return host.a2aCalls
    .map((m) =>
      m.parts[0]?.kind === 'data'
        ? (m.parts[0].data as { envelope_id?: string; transaction_id?: string })
        : {},
    )
    .filter((d) => d.transaction_id === transactionId)
    .map((d) => d.envelope_id ?? '');
}

/** What the shopping assistant holds mid-deal: a state the receiver never saw, under an envelope id it never saw. */
function midDeal(transactionId: string): {
  parent: { envelope_id: string; transaction_id: string };
  state: AcpState;
} {
  return { parent: { envelope_id: newEnvelopeId(), transaction_id: transactionId }, state: leadState() };
}

describe('unknown parent then recovery (seed "What Happens When Two Agents Meet Mid Transaction")', () => {
  it('answers a delta on an unknown parent with ACP_PARENT_UNKNOWN, then the sender sends one snapshot', async () => {
    const transactionId = txId('meet');
    const { parent, state } = midDeal(transactionId);
    const client = await createAcpClient({
      agentUrl: host.url,
      caCert: host.caCert,
      snapshotFor: (d: DeltaEnvelope) => Promise.resolve(applyDelta(state, d)),
    });
    const delta = freshDelta(parent, [
      { op: 'replace', path: '/transaction/stage', value: 'quote' },
      eventOp('ev-meet-1'),
    ]);
    const ack = await client.send(delta);

    // Exactly two round trips: the delta (refused, not retried) and the snapshot.
    const calls = callsFor(transactionId);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toBe(delta.envelope_id);
    expect(calls[1]).toBe(ack.envelope_id);
    expect(ack.envelope_id).not.toBe(delta.envelope_id);

    // The store holds the snapshot only; its state is the delta's result.
    expect(await store.findEnvelope(delta.envelope_id)).toBeUndefined();
    expect((await store.findEnvelope(ack.envelope_id))?.kind).toBe('snapshot');
    const held = await host.http.state(transactionId);
    expect(held.envelope.transaction.stage).toBe('quote');
    expect(held.envelope.events.map((e) => e.event_id)).toContain('ev-meet-1');
  });

  it('chains the next delta on the recovered snapshot (one round trip, accepted as a delta)', async () => {
    const transactionId = txId('chain');
    const { parent, state } = midDeal(transactionId);
    const client = await createAcpClient({
      agentUrl: host.url,
      caCert: host.caCert,
      snapshotFor: (d) => Promise.resolve(applyDelta(state, d)),
    });
    const recovered = await client.send(freshDelta(parent, [eventOp('ev-chain-1')]));
    const next = await client.sendDelta(transactionId, [eventOp('ev-chain-2')], producer());
    expect(callsFor(transactionId)).toHaveLength(3);
    expect((await store.findEnvelope(next.envelope_id))?.kind).toBe('delta');
    expect((await store.head(transactionId))?.headEnvelopeId).toBe(next.envelope_id);
    expect(recovered.transaction_id).toBe(transactionId);
  });

  it('surfaces ACP_PARENT_UNKNOWN without a retry when the sender cannot build the snapshot', async () => {
    const transactionId = txId('stuck');
    const client = await createAcpClient({ agentUrl: host.url, caCert: host.caCert });
    const delta = freshDelta(midDeal(transactionId).parent, [eventOp('ev-stuck-1')]);
    expect(await codeOf(client.send(delta))).toBe('ACP_PARENT_UNKNOWN');
    expect(callsFor(transactionId)).toEqual([delta.envelope_id]);
    expect(await store.head(transactionId)).toBeUndefined();
  });

  it('recovers from the state request too: requestState, then a delta on the returned snapshot', async () => {
    const transactionId = txId('ask');
    const first = await createAcpClient({ agentUrl: host.url, caCert: host.caCert });
    await first.send(
      buildSnapshot({ transaction_id: transactionId, producer: producer(), state: leadState() }),
    );
    // A second agent meets the deal without history: it asks for the state and patches on top of it.
    const second = await createAcpClient({ agentUrl: host.url, caCert: host.caCert });
    const snapshot = await second.requestState(transactionId);
    expect(stateOf(snapshot).transaction.stage).toBe('lead');
    const ack = await second.sendDelta(
      transactionId,
      [{ op: 'replace', path: '/transaction/stage', value: 'quote' }],
      producer(),
    );
    expect((await store.findEnvelope(ack.envelope_id))?.kind).toBe('delta');
  });
});

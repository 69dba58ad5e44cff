import { describe, expect, it } from 'vitest';
import { MemoryTransactionStore } from '../../src/storage/memory/acp-transaction-store-memory.js';
import {
  anonymousState,
  delta,
  envelopeIdFor,
  eventOp,
  fixedClock,
  RECEIVER_AGENT_ID,
  sequentialIds,
  snapshot,
} from '../helpers/acp-builders.js';
import { readFixture } from '../helpers/acp-fixtures.js';
import {
  isSnapshot,
  stateOf,
  type PatchOperation,
  type SnapshotEnvelope,
} from '../../src/acpspec/envelope.js';
import { isAcpError } from '../../src/acpspec/errors.js';
import { createAcpReceiver, type AcpReceiver } from '../../src/acpspec/receiver.js';
import type { TransactionStore } from '../../src/acpspec/transaction-store.js';
import { parseEnvelope } from '../../src/acpspec/validate.js';

function setup(store: TransactionStore = new MemoryTransactionStore(), idSeed = 0x1000): AcpReceiver {
  return createAcpReceiver({
    store,
    accepts: ['snapshot', 'delta'],
    receiverAgentId: RECEIVER_AGENT_ID,
    producer: { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' },
    clock: fixedClock(),
    ids: sequentialIds(idSeed),
  });
}
const tls = { secure: true };
const codeOf = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => 'accepted',
    (e: unknown) => (isAcpError(e) ? e.code : e),
  );

/**
 * The trade-in fixture: a buyer owning `v-trade` and receiving the delivery; `p-denied` (data_sharing denied),
 * `p-elsewhere` (granted to another agent only) and `p-lapsed` (a grant that expired in 2020), none with personal data.
 */
const tradeIn = ((): SnapshotEnvelope => {
  const envelope = parseEnvelope(readFixture('valid/trade-in-snapshot.json').envelope);
  if (!isSnapshot(envelope)) throw new Error('valid/trade-in-snapshot.json is not a snapshot');
  return envelope;
})();

async function seeded(): Promise<AcpReceiver> {
  const receiver = setup();
  await receiver.ingest(tradeIn, tls);
  return receiver;
}

const onTradeIn = (n: number, patch: PatchOperation[]) =>
  delta(tradeIn, patch, { envelope_id: envelopeIdFor(n) });
const contactOf = (party: string): PatchOperation => ({
  op: 'add',
  path: `/parties/${party}/contact`,
  value: { email: 'grace@example.com' },
});
const lowerTo = (party: string): PatchOperation => ({
  op: 'replace',
  path: `/consent/${party}/data_sharing`,
  value: { state: 'limited' },
});

describe('a "lowering" cannot widen consent (issue 9; design "Consent")', () => {
  it.each(['p-elsewhere', 'p-lapsed'])('refuses personal data of %s on its own', async (party) => {
    expect(await codeOf((await seeded()).ingest(onTradeIn(0x900, [contactOf(party)]), tls))).toBe(
      'ACP_CONSENT_REQUIRED',
    );
  });

  it.each(['p-elsewhere', 'p-lapsed'])(
    'refuses personal data of %s with a delta replacing its consent by {state: limited}',
    async (party) => {
      expect(
        await codeOf((await seeded()).ingest(onTradeIn(0x901, [lowerTo(party), contactOf(party)]), tls)),
      ).toBe('ACP_CONSENT_REQUIRED');
    },
  );

  it.each(['p-elsewhere', 'p-lapsed'])(
    'refuses personal data of %s in a snapshot asserting {state: limited}',
    async (party) => {
      const state = stateOf(tradeIn);
      const asserted = snapshot({
        transaction_id: tradeIn.transaction_id,
        envelope_id: envelopeIdFor(0x902),
        state: {
          ...state,
          parties: {
            ...state.parties,
            [party]: { kind: 'person', roles: ['co_buyer'], contact: { email: 'grace@example.com' } },
          },
          consent: { ...state.consent, [party]: { data_sharing: { state: 'limited' } } },
        },
      });
      expect(await codeOf((await seeded()).ingest(asserted, tls))).toBe('ACP_CONSENT_REQUIRED');
    },
  );

  it('keeps the held audience after a lowering without personal data', async () => {
    const receiver = await seeded();
    await receiver.ingest(onTradeIn(0x903, [lowerTo('p-elsewhere')]), tls);
    const { envelope } = await receiver.state(tradeIn.transaction_id);
    expect(envelope.consent['p-elsewhere']?.data_sharing).toMatchObject({
      state: 'limited',
      granted_to: ['agent:someone-else'],
    });
  });
});

describe('personal data handed to another party needs that party\'s consent (issue 9; design "Consent")', () => {
  it.each([
    ['/vehicles/v-trade/owner_party_id', 0x910],
    ['/fulfillment/delivery/recipient_party_id', 0x911],
  ])('refuses %s re-pointed to a party that denied consent', async (path, n) => {
    const receiver = setup();
    const before = await receiver.ingest(tradeIn, tls);
    expect(
      await codeOf(receiver.ingest(onTradeIn(n, [{ op: 'replace', path, value: 'p-denied' }]), tls)),
    ).toBe('ACP_CONSENT_REQUIRED');
    expect((await receiver.state(tradeIn.transaction_id)).envelope.envelope_id).toBe(
      before.state_envelope_id,
    );
  });

  it('accepts a reference re-pointed to a party whose consent covers the receiver', async () => {
    const receiver = await seeded();
    const patch: PatchOperation[] = [
      { op: 'replace', path: '/fulfillment/delivery/recipient_party_id', value: 'p-buyer' },
    ];
    expect(await codeOf(receiver.ingest(onTradeIn(0x912, patch), tls))).toBe('accepted');
  });

  it("still accepts a revocation while the party's personal data is held", async () => {
    const revoke: PatchOperation = {
      op: 'replace',
      path: '/consent/p-buyer/data_sharing',
      value: { state: 'revoked' },
    };
    expect(await codeOf((await seeded()).ingest(onTradeIn(0x913, [revoke]), tls))).toBe('accepted');
  });
});

describe('envelope ids are unique across the store (issue 9; design "Deltas")', () => {
  it('refuses a snapshot in another transaction reusing a state snapshot id the receiver minted', async () => {
    const receiver = setup();
    const first = await receiver.ingest(snapshot({ state: anonymousState() }), tls);
    const reuse = snapshot({
      transaction_id: 'tx-2',
      envelope_id: first.state_envelope_id,
      state: anonymousState(),
    });
    expect(await codeOf(receiver.ingest(reuse, tls))).toBe('ACP_ENVELOPE_CONFLICT');
    expect(await codeOf(receiver.state('tx-2'))).toBe('ACP_TRANSACTION_UNKNOWN');
  });

  it('refuses a delta reusing the state snapshot id of its own transaction', async () => {
    const receiver = setup();
    const first = await receiver.ingest(snapshot({ state: anonymousState() }), tls);
    const reuse = delta(snapshot(), [eventOp('ev-2')], { envelope_id: first.state_envelope_id });
    expect(await codeOf(receiver.ingest(reuse, tls))).toBe('ACP_ENVELOPE_CONFLICT');
    expect((await receiver.events('tx-1')).events.map((e) => e.event_id)).toEqual(['ev-lead-1']);
  });

  it('refuses an envelope id already used in another transaction', async () => {
    const receiver = setup();
    await receiver.ingest(snapshot({ state: anonymousState() }), tls);
    expect(
      await codeOf(receiver.ingest(snapshot({ transaction_id: 'tx-2', state: anonymousState() }), tls)),
    ).toBe('ACP_ENVELOPE_CONFLICT');
  });
});

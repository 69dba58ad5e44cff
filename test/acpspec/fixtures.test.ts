import { describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../src/shared/jcs.js';
import { MemoryTransactionStore } from '../../src/storage/memory/acp-transaction-store-memory.js';
import { fixedClock, RECEIVER_AGENT_ID, sequentialIds } from '../helpers/acp-builders.js';
import { givenChain, listFixtures, type AcpFixture } from '../helpers/acp-fixtures.js';
import { isAcpError } from '../../src/acpspec/errors.js';
import { createAcpReceiver, type AcpReceiver } from '../../src/acpspec/receiver.js';
import { checkEnvelope } from '../../src/acpspec/validate.js';

async function receiverFor(fixture: AcpFixture): Promise<AcpReceiver> {
  const receiver = createAcpReceiver({
    store: new MemoryTransactionStore(),
    accepts: fixture.accepts,
    receiverAgentId: RECEIVER_AGENT_ID,
    producer: { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' },
    clock: fixedClock(),
    ids: sequentialIds(),
  });
  for (const given of givenChain(fixture)) await receiver.ingest(given.envelope, { secure: true });
  return receiver;
}

describe('ACPspec fixture corpus', () => {
  const valid = listFixtures('valid');
  const invalid = listFixtures('invalid');

  it('has fixtures in both folders', () => {
    expect(valid.length).toBeGreaterThan(0);
    expect(invalid.length).toBeGreaterThan(0);
  });

  it.each(valid.map((f) => [f.name, f] as const))('accepts %s', async (_name, fixture) => {
    const receiver = await receiverFor(fixture);
    const ack = await receiver.ingest(fixture.envelope, { secure: fixture.secure });
    expect(ack.envelope_id).toBe(fixture.envelope['envelope_id']);
  });

  it.each(valid.map((f) => [f.name, f] as const))(
    'answers %s state as a valid snapshot with canonical bytes',
    async (_name, fixture) => {
      const receiver = await receiverFor(fixture);
      const ack = await receiver.ingest(fixture.envelope, { secure: fixture.secure });
      const state = await receiver.state(ack.transaction_id);
      expect(state.envelope.envelope_id).toBe(ack.state_envelope_id);
      expect(state.envelope.parent_envelope_id).toBeUndefined();
      expect(checkEnvelope(state.envelope).ok).toBe(true);
      expect(state.bytes.equals(canonicalBytes(state.envelope))).toBe(true);
      expect((await receiver.state(ack.transaction_id)).bytes.equals(state.bytes)).toBe(true);
    },
  );

  it.each(invalid.map((f) => [f.name, f] as const))(
    'rejects %s with its named code',
    async (_name, fixture) => {
      expect(fixture.expect).toMatch(/^ACP_/);
      const receiver = await receiverFor(fixture);
      const error = await receiver
        .ingest(fixture.envelope, { secure: fixture.secure })
        .catch((e: unknown) => e);
      expect(isAcpError(error) ? error.code : error).toBe(fixture.expect);
    },
  );
});

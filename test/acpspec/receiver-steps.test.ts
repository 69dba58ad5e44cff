import { describe, expect, it } from 'vitest';
import { MemoryTransactionStore } from '../../src/storage/memory/acp-transaction-store-memory.js';
import {
  anonymousState,
  delta,
  envelopeIdFor,
  eventOp,
  fixedClock,
  leadState,
  RECEIVER_AGENT_ID,
  sequentialIds,
  snapshot,
} from '../helpers/acp-builders.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { envelopeKind } from '../../src/acpspec/envelope.js';
import { isAcpError } from '../../src/acpspec/errors.js';
import { createHeldStateCache } from '../../src/acpspec/held-state.js';
import { StoreBackedReceiver } from '../../src/acpspec/receiver.js';
import { TransitionCommitter, type Inbound } from '../../src/acpspec/receiver-commit.js';

const producer = { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' };

function setup(store = new MemoryTransactionStore()): StoreBackedReceiver {
  return new StoreBackedReceiver({
    store,
    accepts: ['snapshot'],
    receiverAgentId: RECEIVER_AGENT_ID,
    producer,
    clock: fixedClock(),
    ids: sequentialIds(),
  });
}

function committer(store = new MemoryTransactionStore()): TransitionCommitter {
  return new TransitionCommitter({
    store,
    cache: createHeldStateCache(1024 * 1024),
    clock: fixedClock(),
    ids: sequentialIds(),
    receiverAgentId: RECEIVER_AGENT_ID,
    header: { acp_version: '0.1', producer },
    memo: new WeakMap(),
  });
}

const inboundOf = (envelope: Inbound['envelope'], caller = 'anonymous'): Inbound => ({
  envelope,
  kind: envelopeKind(envelope),
  text: canonicalJson(envelope),
  caller,
});

const thrown = (run: () => unknown): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
};

// The steps are private to the receiver's port; element access reaches them, type-checked, one at a time.
describe('receiver step: admit', () => {
  it('reads the envelope as its canonical text under the anonymous caller', () => {
    const envelope = snapshot({ state: anonymousState() });
    expect(setup()['admit'](envelope, { secure: false })).toEqual({
      envelope,
      kind: 'snapshot',
      text: canonicalJson(envelope),
      caller: 'anonymous',
    });
  });

  it('refuses a kind the receiver does not accept, naming what it accepts', () => {
    const error = thrown(() => setup()['admit'](delta(snapshot(), [eventOp('ev-2')]), { secure: true }));
    expect(isAcpError(error, 'ACP_KIND_NOT_ACCEPTED') && error.data).toEqual({
      kind: 'delta',
      accepts: ['snapshot'],
    });
  });

  it('refuses personal data over a channel without TLS', () => {
    const error = thrown(() => setup()['admit'](snapshot({ state: leadState() }), { secure: false }));
    expect(isAcpError(error, 'ACP_TRANSPORT_INSECURE')).toBe(true);
  });
});

describe('receiver step: replayAck', () => {
  it('finds nothing for an envelope id the store has not seen', async () => {
    expect(await setup()['replayAck'](inboundOf(snapshot()), undefined)).toBeUndefined();
  });

  it('answers a stored envelope with its original ack, and other bytes under its id with a conflict', async () => {
    const receiver = setup();
    const ack = await receiver.ingest(snapshot(), { secure: true });
    expect(await receiver['replayAck'](inboundOf(snapshot()), undefined)).toEqual(ack);
    const other = snapshot({ produced_at: '2025-06-01T12:30:00Z' });
    const error = await receiver['replayAck'](inboundOf(other), undefined).catch((e: unknown) => e);
    expect(isAcpError(error, 'ACP_ENVELOPE_CONFLICT')).toBe(true);
  });

  it("refuses a replay into another caller's transaction", async () => {
    const receiver = setup();
    await receiver.ingest(snapshot(), { secure: true, caller: 'alice' });
    const error = await receiver['replayAck'](inboundOf(snapshot(), 'bob'), undefined).catch(
      (e: unknown) => e,
    );
    expect(isAcpError(error, 'ACP_POLICY_VIOLATION')).toBe(true);
  });
});

describe('TransitionCommitter', () => {
  it('reports a delta whose parent is not the held head as a parent mismatch', async () => {
    const store = new MemoryTransactionStore();
    const commits = committer(store);
    const first = inboundOf(snapshot());
    const transition = commits.transitionOn(first.envelope, undefined);
    if ('parentMismatch' in transition) throw new Error('a snapshot has no parent');
    await commits.commit(first, undefined, transition);
    const head = await store.head('tx-1');
    const state = await store.state('tx-1');
    if (head === undefined || state === undefined) throw new Error('the commit stored nothing');
    const { acp_version, producer: header, ...objects } = state.body;
    const held = {
      head,
      header: { acp_version, producer: header },
      state: { ...objects, events: state.events },
      eventTexts: state.eventTexts,
      eventBytes: 0,
    };
    const stray = delta({ envelope_id: envelopeIdFor(9), transaction_id: 'tx-1' }, [eventOp('ev-2')]);
    expect(commits.transitionOn(stray, held)).toEqual({ parentMismatch: envelopeIdFor(9) });
  });

  it('commits a new transaction and acknowledges it with the state snapshot id; a second try is refused', async () => {
    const store = new MemoryTransactionStore();
    const commits = committer(store);
    const inbound = inboundOf(snapshot());
    const transition = commits.transitionOn(inbound.envelope, undefined);
    if ('parentMismatch' in transition) throw new Error('a snapshot has no parent');
    const ack = await commits.commit(inbound, undefined, transition);
    expect(ack).toMatchObject({ envelope_id: envelopeIdFor(1), transaction_id: 'tx-1' });
    expect((await store.head('tx-1'))?.stateEnvelopeId).toBe(ack?.state_envelope_id);
    expect(await commits.commit(inbound, undefined, transition)).toBeUndefined();
  });
});

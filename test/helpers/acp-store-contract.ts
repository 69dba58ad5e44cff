import { expect, it } from 'vitest';
import type { IngestCommit, TransactionStore } from '../../src/acpspec/transaction-store.js';
import type { AcpEvent } from '../../src/acpspec/envelope.js';
import { stateBodyOf } from '../../src/acpspec/state-body.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { anonymousState, producer } from './acp-builders.js';
import type { StoreUnderTest } from './store-harness.js';

function event(id: string): AcpEvent {
  return {
    event_id: id,
    type: 'note.added',
    occurred_at: '2025-06-01T12:00:00Z',
    actor: 'a',
    subject: '/transaction',
    data: {},
  };
}

/** An event to commit: the store keeps its canonical text. */
function added(id: string): { eventId: string; text: string } {
  return { eventId: id, text: canonicalJson(event(id)) };
}

/** A state body (canonical text) whose transaction stage names `n`, so bodies differ per commit. */
function bodyFor(n: number): string {
  const state = anonymousState();
  return canonicalJson(
    stateBodyOf(
      { acp_version: '0.1', producer: producer() },
      { ...state, transaction: { ...state.transaction, external_refs: { n: String(n) } } },
    ),
  );
}

/** A commit for tests; `n` makes ids unique. */
function commitFor(n: number, overrides: Partial<IngestCommit> = {}): IngestCommit {
  return {
    transactionId: 'tx-1',
    expectedVersion: 0,
    owner: 'agent:alice',
    envelope: {
      envelopeId: `env-${n}`,
      kind: 'snapshot',
      parentEnvelopeId: undefined,
      text: `{"n":${n}}`,
      receivedAt: '2025-06-01T12:00:00Z',
    },
    state: { envelopeId: `state-${n}`, body: bodyFor(n) },
    events: [added(`ev-${n}`)],
    firstSeq: 1,
    ...overrides,
  };
}

/**
 * The storage contract every {@link TransactionStore} must meet (STYLE.md "Tests"), run on each backend
 * through the store harness (test/helpers/store-harness.ts).
 */
export function transactionStoreContract(t: StoreUnderTest<TransactionStore>): void {
  const withStore = (fn: (store: TransactionStore) => Promise<void>): Promise<void> => fn(t.store);

  it('keeps the creating caller as owner when later commits move the head', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1));
      expect(
        await store.commit(commitFor(2, { expectedVersion: 1, firstSeq: 2, owner: 'agent:bob' })),
      ).toEqual({ ok: true, version: 2 });
      expect((await store.head('tx-1'))?.owner).toBe('agent:alice');
    }));

  it('creates a transaction on its first commit', () =>
    withStore(async (store) => {
      expect(await store.commit(commitFor(1))).toEqual({ ok: true, version: 1 });
      expect(await store.head('tx-1')).toEqual({
        transactionId: 'tx-1',
        version: 1,
        headEnvelopeId: 'env-1',
        stateEnvelopeId: 'state-1',
        stateProducedAt: '2025-06-01T12:00:00Z',
        eventCount: 1,
        owner: 'agent:alice',
      });
      expect(await store.findEnvelope('env-1')).toEqual({
        envelopeId: 'env-1',
        transactionId: 'tx-1',
        kind: 'snapshot',
        text: '{"n":1}',
        stateEnvelopeId: 'state-1',
      });
    }));

  it("lists one owner's transactions in id order, paged after a transaction id", () =>
    withStore(async (store) => {
      for (const [n, id, owner] of [
        [1, 'tx-b', 'agent:alice'],
        [2, 'tx-a', 'agent:alice'],
        [3, 'tx-c', 'agent:bob'],
        [4, 'tx-d', 'agent:alice'],
      ] as const)
        await store.commit(commitFor(n, { transactionId: id, owner }));
      const first = await store.transactions('agent:alice', { after: '', limit: 2 });
      expect(first).toEqual([
        { transactionId: 'tx-a', stateEnvelopeId: 'state-2', stateProducedAt: '2025-06-01T12:00:00Z' },
        { transactionId: 'tx-b', stateEnvelopeId: 'state-1', stateProducedAt: '2025-06-01T12:00:00Z' },
      ]);
      const rest = await store.transactions('agent:alice', { after: 'tx-b', limit: 2 });
      expect(rest.map((s) => s.transactionId)).toEqual(['tx-d']);
      expect(await store.transactions('agent:carol', { after: '', limit: 2 })).toEqual([]);
    }));

  it('returns nothing for unknown ids', () =>
    withStore(async (store) => {
      expect(await store.head('tx-none')).toBeUndefined();
      expect(await store.findEnvelope('env-none')).toBeUndefined();
      expect(await store.isKnownEnvelope('tx-none', 'env-none')).toBe(false);
      expect(await store.events('tx-none', { after: 0, limit: 10 })).toEqual([]);
    }));

  it('moves the head by compare-and-set', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1));
      const next = commitFor(2, {
        expectedVersion: 1,
        firstSeq: 2,
        envelope: { ...commitFor(2).envelope, kind: 'delta', parentEnvelopeId: 'env-1' },
      });
      expect(await store.commit(next)).toEqual({ ok: true, version: 2 });
      expect((await store.head('tx-1'))?.headEnvelopeId).toBe('env-2');
    }));

  it('refuses a stale version and writes nothing', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1));
      expect(await store.commit(commitFor(2))).toEqual({ ok: false, reason: 'stale' });
      expect(await store.findEnvelope('env-2')).toBeUndefined();
      expect(await store.events('tx-1', { after: 0, limit: 10 })).toHaveLength(1);
    }));

  it('lets exactly one of two racing writers win', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1));
      const results = await Promise.all(
        [2, 3].map((n) => store.commit(commitFor(n, { expectedVersion: 1, firstSeq: 2 }))),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(await store.events('tx-1', { after: 0, limit: 10 })).toHaveLength(2);
    }));

  it('reports a duplicate envelope id and rolls back the head', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1));
      await store.commit(commitFor(9, { transactionId: 'tx-2' }));
      const dup = commitFor(1, {
        transactionId: 'tx-2',
        expectedVersion: 1,
        firstSeq: 2,
        state: { envelopeId: 'state-x', body: undefined },
      });
      expect(await store.commit(dup)).toEqual({ ok: false, reason: 'duplicate' });
      expect((await store.head('tx-2'))?.version).toBe(1);
      expect(await store.events('tx-2', { after: 0, limit: 10 })).toHaveLength(1);
    }));

  it('refuses an envelope id that names a state snapshot in any transaction (issue 9)', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1));
      const reuse = commitFor(2, {
        transactionId: 'tx-2',
        envelope: { ...commitFor(2).envelope, envelopeId: 'state-1' },
      });
      expect(await store.commit(reuse)).toEqual({ ok: false, reason: 'duplicate' });
      expect(await store.head('tx-2')).toBeUndefined();
      expect(await store.isKnownEnvelope('tx-2', 'state-1')).toBe(false);
    }));

  it('refuses a state id that names an ingested envelope in any transaction (issue 9)', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1));
      expect(
        await store.commit(
          commitFor(2, { transactionId: 'tx-2', state: { envelopeId: 'env-1', body: bodyFor(2) } }),
        ),
      ).toEqual({ ok: false, reason: 'duplicate' });
      expect(await store.head('tx-2')).toBeUndefined();
    }));

  it('tells what an envelope id names anywhere in the store', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1));
      expect(await store.findEnvelopeId('env-1')).toEqual({
        role: 'ingested',
        envelope: await store.findEnvelope('env-1'),
      });
      expect(await store.findEnvelopeId('state-1')).toEqual({ role: 'state', transactionId: 'tx-1' });
      expect(await store.findEnvelopeId('env-none')).toBeUndefined();
    }));

  it('knows ingested and state envelope ids per transaction', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1));
      expect(await store.isKnownEnvelope('tx-1', 'env-1')).toBe(true);
      expect(await store.isKnownEnvelope('tx-1', 'state-1')).toBe(true);
      expect(await store.isKnownEnvelope('tx-2', 'env-1')).toBe(false);
    }));

  it('pages events in sequence order', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1, { events: [added('a'), added('b'), added('c')] }));
      const page = await store.events('tx-1', { after: 1, limit: 1 });
      expect(page).toEqual([{ seq: 2, event: event('b') }]);
      expect((await store.events('tx-1', { after: 0, limit: 10 })).map((e) => e.seq)).toEqual([1, 2, 3]);
    }));

  it('reads the state back in its parts, decoded: the body as last written, every event up to the head', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1));
      await store.commit(
        commitFor(2, {
          expectedVersion: 1,
          firstSeq: 2,
          state: { envelopeId: 'state-2', body: undefined },
        }),
      );
      const state = await store.state('tx-1');
      expect(state?.head).toMatchObject({ version: 2, stateEnvelopeId: 'state-2', eventCount: 2 });
      expect(canonicalJson(state?.body)).toBe(bodyFor(1));
      expect(state?.events).toEqual([event('ev-1'), event('ev-2')]);
      expect(state?.eventTexts).toEqual([added('ev-1').text, added('ev-2').text]);
      await store.commit(commitFor(3, { expectedVersion: 2, firstSeq: 3 }));
      expect(canonicalJson((await store.state('tx-1'))?.body)).toBe(bodyFor(3));
      expect(await store.state('tx-none')).toBeUndefined();
    }));

  it('commits many transactions at once, each on its own: a duplicate or a stale one does not fail the others (group commit)', () =>
    withStore(async (store) => {
      await store.commit(commitFor(1));
      const commits = [
        commitFor(10, { transactionId: 'tx-a' }),
        commitFor(11, {
          transactionId: 'tx-b',
          envelope: { ...commitFor(11).envelope, envelopeId: 'env-1' },
        }),
        commitFor(12, { transactionId: 'tx-1' }),
        commitFor(13, { transactionId: 'tx-1', expectedVersion: 1, firstSeq: 2 }),
        commitFor(14, { transactionId: 'tx-c' }),
      ];
      const results = await Promise.all(commits.map((c) => store.commit(c)));
      expect(results).toEqual([
        { ok: true, version: 1 },
        { ok: false, reason: 'duplicate' },
        { ok: false, reason: 'stale' },
        { ok: true, version: 2 },
        { ok: true, version: 1 },
      ]);
      expect(await store.head('tx-b')).toBeUndefined();
      expect(await store.findEnvelopeId('state-11')).toBeUndefined();
      expect(await store.findEnvelopeId('state-12')).toBeUndefined();
      expect((await store.events('tx-1', { after: 0, limit: 10 })).map((e) => e.event.event_id)).toEqual([
        'ev-1',
        'ev-13',
      ]);
      expect((await store.state('tx-c'))?.head.version).toBe(1);
    }));
}

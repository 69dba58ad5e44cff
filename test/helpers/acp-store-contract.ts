import { describe, expect, it } from 'vitest';
import type { IngestCommit, TransactionStore } from '../../src/acpspec/transaction-store.js';
import type { AcpEvent } from '../../src/acpspec/envelope.js';

function event(id: string): AcpEvent {
  return { event_id: id, type: 'note.added', occurred_at: '2025-06-01T12:00:00Z', actor: 'a', subject: '/transaction', data: {} };
}

/** A commit for tests; `n` makes ids unique. */
export function commitFor(n: number, overrides: Partial<IngestCommit> = {}): IngestCommit {
  return {
    transactionId: 'tx-1',
    expectedVersion: 0,
    owner: 'agent:alice',
    envelope: { envelopeId: `env-${n}`, kind: 'snapshot', parentEnvelopeId: undefined, text: `{"n":${n}}`, receivedAt: '2025-06-01T12:00:00Z' },
    state: { envelopeId: `state-${n}`, text: `{"state":${n}}` },
    events: [event(`ev-${n}`)],
    firstSeq: 1,
    ...overrides,
  };
}

/** The storage contract every {@link TransactionStore} must meet (STYLE.md "Tests"). */
export function transactionStoreContract(name: string, open: () => Promise<{ store: TransactionStore; close(): Promise<void> }>): void {
  describe(`TransactionStore contract: ${name}`, () => {
    const withStore = async (fn: (store: TransactionStore) => Promise<void>): Promise<void> => {
      const opened = await open();
      try {
        await fn(opened.store);
      } finally {
        await opened.close();
      }
    };

    it('keeps the creating caller as owner when later commits move the head', () =>
      withStore(async (store) => {
        await store.commit(commitFor(1));
        expect(await store.commit(commitFor(2, { expectedVersion: 1, firstSeq: 2, owner: 'agent:bob' }))).toEqual({ ok: true, version: 2 });
        expect((await store.head('tx-1'))?.owner).toBe('agent:alice');
      }));

    it('creates a transaction on its first commit', () =>
      withStore(async (store) => {
        expect(await store.commit(commitFor(1))).toEqual({ ok: true, version: 1 });
        expect(await store.head('tx-1')).toEqual({
          transactionId: 'tx-1', version: 1, headEnvelopeId: 'env-1', stateEnvelopeId: 'state-1', stateText: '{"state":1}', eventCount: 1,
          owner: 'agent:alice',
        });
        expect(await store.findEnvelope('env-1')).toEqual({ envelopeId: 'env-1', transactionId: 'tx-1', kind: 'snapshot', text: '{"n":1}', stateEnvelopeId: 'state-1' });
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
        const next = commitFor(2, { expectedVersion: 1, firstSeq: 2, envelope: { ...commitFor(2).envelope, kind: 'delta', parentEnvelopeId: 'env-1' } });
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
        const results = await Promise.all([2, 3].map((n) => store.commit(commitFor(n, { expectedVersion: 1, firstSeq: 2 }))));
        expect(results.filter((r) => r.ok)).toHaveLength(1);
        expect(await store.events('tx-1', { after: 0, limit: 10 })).toHaveLength(2);
      }));

    it('reports a duplicate envelope id and rolls back the head', () =>
      withStore(async (store) => {
        await store.commit(commitFor(1));
        await store.commit(commitFor(9, { transactionId: 'tx-2' }));
        const dup = commitFor(1, { transactionId: 'tx-2', expectedVersion: 1, firstSeq: 2, state: { envelopeId: 'state-x', text: '{}' } });
        expect(await store.commit(dup)).toEqual({ ok: false, reason: 'duplicate' });
        expect((await store.head('tx-2'))?.version).toBe(1);
        expect(await store.events('tx-2', { after: 0, limit: 10 })).toHaveLength(1);
      }));

    it('refuses an envelope id that names a state snapshot in any transaction (issue 9)', () =>
      withStore(async (store) => {
        await store.commit(commitFor(1));
        const reuse = commitFor(2, { transactionId: 'tx-2', envelope: { ...commitFor(2).envelope, envelopeId: 'state-1' } });
        expect(await store.commit(reuse)).toEqual({ ok: false, reason: 'duplicate' });
        expect(await store.head('tx-2')).toBeUndefined();
        expect(await store.isKnownEnvelope('tx-2', 'state-1')).toBe(false);
      }));

    it('refuses a state id that names an ingested envelope in any transaction (issue 9)', () =>
      withStore(async (store) => {
        await store.commit(commitFor(1));
        expect(await store.commit(commitFor(2, { transactionId: 'tx-2', state: { envelopeId: 'env-1', text: '{}' } }))).toEqual({ ok: false, reason: 'duplicate' });
        expect(await store.head('tx-2')).toBeUndefined();
      }));

    it('tells what an envelope id names anywhere in the store', () =>
      withStore(async (store) => {
        await store.commit(commitFor(1));
        expect(await store.findEnvelopeId('env-1')).toEqual({ role: 'ingested', envelope: await store.findEnvelope('env-1') });
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
        await store.commit(commitFor(1, { events: [event('a'), event('b'), event('c')] }));
        const page = await store.events('tx-1', { after: 1, limit: 1 });
        expect(page).toEqual([{ seq: 2, event: event('b') }]);
        expect((await store.events('tx-1', { after: 0, limit: 10 })).map((e) => e.seq)).toEqual([1, 2, 3]);
      }));
  });
}

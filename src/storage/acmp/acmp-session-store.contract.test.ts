import { expect, it } from 'vitest';
import { storeContract, type StoreBackends } from '../../../test/helpers/store-harness.js';
import { MemorySessionStore } from '../memory/acmp-session-store-memory.js';
import { sessionTransition, type NegotiationSession } from '../../acmp/negotiation/session.js';
import type { SessionStore } from '../../acmp/negotiation/session-store.js';
import { acmpMigrations } from './acmp-migrations.js';
import { KyselySessionStore } from './acmp-session-store-kysely.js';

const backends: StoreBackends<SessionStore> = {
  memory: () => new MemorySessionStore(),
  kysely: (database) => new KyselySessionStore(database),
  migrations: [acmpMigrations],
};

const A = { tenant: '', agent: 'agent:a' };
const B = { tenant: '', agent: 'agent:b' };
let counter = 0;

/** A session at version 1 with an offer standing until `validUntil` (override any field). */
function session(overrides: Partial<NegotiationSession> = {}, validUntil = 10_000): NegotiationSession {
  const n = ++counter;
  const offer = {
    offer_id: `offer_${n}`,
    capability: 'count-runs',
    price_cu: 0.001,
    valid_until_ms: validUntil,
  };
  return {
    ...{
      id: `neg_${process.pid}_${Date.now()}_${n}`,
      contextId: `ctx_${n}`,
      scope: A,
      openMessageId: `m-${n}`,
      version: 1,
      phase: 'offer' as const,
      createdAt: 1_000,
      updatedAt: 1_000,
    },
    ...{ expiresAt: 60_000, maxRounds: 3, round: 1, listPrice: 0.001, standing: offer, superseded: [] },
    turns: [
      {
        messageId: `m-${n}`,
        hash: 'sha256:h',
        request: '{}',
        at: 1_000,
        reply: { kind: 'offer' as const, offer, round: 1 },
      },
    ],
    ...overrides,
  };
}

storeContract('SessionStore contract', backends, (t) => {
  it('creates a session and reads it back unchanged; the same opening message finds it', async () => {
    const s = session();
    expect(await t.store.create(s, 8, 2_000)).toEqual({ kind: 'created' });
    expect(await t.store.get(s.id)).toEqual(s);
    expect(await t.store.byOpenMessage(A, s.openMessageId)).toEqual(s);
    expect(await t.store.byOpenMessage(B, s.openMessageId)).toBeUndefined();
    expect(await t.store.create({ ...s, id: `${s.id}_2` }, 8, 2_000)).toEqual({
      kind: 'exists',
      existing: s,
    });
  });

  it("caps the open sessions of a caller at the time given; due and other callers' sessions do not count", async () => {
    const scope = { tenant: 't-cap', agent: `agent:cap-${++counter}` };
    expect((await t.store.create(session({ scope }, 5_000), 2, 2_000)).kind).toBe('created');
    expect((await t.store.create(session({ scope }, 9_000), 2, 2_000)).kind).toBe('created');
    expect((await t.store.create(session({ scope }), 2, 2_000)).kind).toBe('cap_reached');
    expect(
      (await t.store.create(session({ scope: { ...scope, agent: 'agent:other-cap' } }), 2, 2_000)).kind,
    ).toBe('created');
    expect((await t.store.create(session({ scope }), 2, 6_000)).kind).toBe('created');
  });

  it('holds the cap exactly when one caller opens many sessions at once (also across connections)', async () => {
    // Five callers in turn, so a race that a single round can miss is all but certain to show.
    for (let round = 0; round < 5; round++) {
      const scope = { tenant: 't-cap', agent: `agent:cap-${++counter}` };
      const opens = Array.from({ length: 20 }, () => t.store.create(session({ scope }, 9_000), 3, 2_000));
      const kinds = (await Promise.all(opens)).map((outcome) => outcome.kind);
      expect(kinds.filter((kind) => kind === 'created')).toHaveLength(3);
      expect(kinds.filter((kind) => kind === 'cap_reached')).toHaveLength(17);
    }
  });

  it('caps a caller across tenants: another tenant is no way around the cap (also when racing)', async () => {
    const agent = `agent:cap-${++counter}`;
    const tenants = Array.from({ length: 24 }, (_, i) => `t${i}`);
    const opens = tenants.map((tenant) =>
      t.store.create(session({ scope: { tenant, agent } }, 9_000), 8, 2_000),
    );
    const kinds = (await Promise.all(opens)).map((outcome) => outcome.kind);
    expect(kinds.filter((kind) => kind === 'created')).toHaveLength(8);
    expect(kinds.filter((kind) => kind === 'cap_reached')).toHaveLength(16);
    const other = { tenant: 't0', agent: `agent:cap-other-${counter}` };
    expect((await t.store.create(session({ scope: other }, 9_000), 8, 2_000)).kind).toBe('created');
  });

  it('writes a change only over the version it was made from: of racing changes exactly one wins', async () => {
    const s = session();
    await t.store.create(s, 8, 2_000);
    const turn = { messageId: 'm-x', hash: 'h', request: '{}', at: 2_000 };
    const racers = Array.from({ length: 10 }, () =>
      t.store.update(sessionTransition.begin(s, { phase: 'accepting', turn }, 2_000)),
    );
    expect((await Promise.all(racers)).filter(Boolean)).toHaveLength(1);
    expect(await t.store.get(s.id)).toMatchObject({ version: 2, phase: 'accepting' });
    expect(await t.store.update(sessionTransition.ended(s, { kind: 'canceled', at: 2_001 }))).toBe(false);
  });

  it('finds due open sessions (of one caller when asked), never terminal ones', async () => {
    const scope = { tenant: 't-due', agent: `agent:due-${++counter}` };
    const due = session({ scope }, 3_000);
    const later = session({ scope }, 50_000);
    const ended = session({ scope }, 3_000);
    for (const s of [due, later, ended]) await t.store.create(s, 8, 2_000);
    await t.store.update(sessionTransition.ended(ended, { kind: 'canceled', at: 2_500 }));
    expect((await t.store.due(4_000, 100, scope)).map((s) => s.id)).toEqual([due.id]);
    expect((await t.store.due(4_000, 1_000)).map((s) => s.id)).toContain(due.id);
  });

  it('counts the sessions open at a time over every caller: not yet due, not ended', async () => {
    const open = session({}, 5_000);
    const other = session({ scope: B }, 5_000);
    const ended = session({}, 5_000);
    for (const s of [open, other, ended]) await t.store.create(s, 8, 2_000);
    await t.store.update(sessionTransition.ended(ended, { kind: 'canceled', at: 2_000 }));
    expect(await t.store.countOpen(4_000)).toBe(2);
    // Past the standing offers' validity they are due: no longer open, though not yet swept.
    expect(await t.store.countOpen(5_001)).toBe(0);
  });

  it("lists a caller's sessions newest first, paged, filtered by phase and context", async () => {
    const scope = { tenant: 't-list', agent: `agent:list-${++counter}` };
    const made = [1_000, 2_000, 3_000].map((at) => session({ scope, updatedAt: at, createdAt: at }));
    for (const s of made) await t.store.create(s, 8, 0);
    const first = await t.store.list(scope, { limit: 2 });
    expect(first.total).toBe(3);
    expect(first.sessions.map((s) => s.id)).toEqual([made[2]!.id, made[1]!.id]);
    const rest = await t.store.list(scope, { limit: 2, after: { updatedAt: 2_000, taskId: made[1]!.id } });
    expect(rest.sessions.map((s) => s.id)).toEqual([made[0]!.id]);
    expect((await t.store.list(scope, { limit: 5, phases: ['accepted'] })).total).toBe(0);
    expect((await t.store.list(scope, { limit: 5, contextId: made[0]!.contextId })).sessions).toHaveLength(1);
    expect((await t.store.list(B, { limit: 5, contextId: made[0]!.contextId })).total).toBe(0);
  });

  it('signals a change to watchers of the session (on PostgreSQL also those of another store instance)', async () => {
    const s = session();
    await t.store.create(s, 8, 2_000);
    // Another instance (a second host's store): only PostgreSQL tells it (LISTEN/NOTIFY).
    const other = await t.reopen?.();
    const signalled = new Promise<void>((resolve) => other?.watch(s.id, resolve));
    const local = new Promise<void>((resolve) => t.store.watch(s.id, resolve));
    await t.store.update(sessionTransition.ended(s, { kind: 'canceled', at: 2_000 }));
    await local;
    if (t.backend === 'postgres') await signalled;
  });
});

import { expect, it } from 'vitest';
import { createMemoryReplayCache, type ReplayCache } from '../../acmp/identity/index.js';
import { storeContract } from '../../../test/helpers/store-harness.js';
import { callerTokenMigrations, KyselyReplayCache } from './replay-cache-kysely.js';

const T0 = Date.UTC(2026, 0, 1);
let now = T0;
const clock = { now: () => now };

storeContract<ReplayCache>(
  'caller-token replay cache (docs/acmp-identity.md "Callers identified by DID")',
  {
    memory: () => createMemoryReplayCache({ clock }),
    kysely: (database) => new KyselyReplayCache(database, clock),
    migrations: [callerTokenMigrations],
  },
  (t) => {
    it('accepts a key once within its lifetime', async () => {
      now = T0;
      expect(await t.store.remember('did:key:z1 j1', T0 + 60_000)).toBe(true);
      expect(await t.store.remember('did:key:z1 j1', T0 + 60_000)).toBe(false);
      expect(await t.store.remember('did:key:z1 j2', T0 + 60_000)).toBe(true);
    });

    it('takes an expired key again', async () => {
      now = T0;
      expect(await t.store.remember('k', T0 + 1_000)).toBe(true);
      now = T0 + 1_000;
      expect(await t.store.remember('k', T0 + 2_000)).toBe(true);
      expect(await t.store.remember('k', T0 + 2_000)).toBe(false);
    });

    it('lets exactly one of concurrent uses of a key through', async () => {
      now = T0;
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, () => t.store.remember('raced', T0 + 60_000)),
      );
      expect(outcomes.filter(Boolean)).toHaveLength(1);
    });

    it.skipIf(t.backend === 'memory')('a second host on the same database sees the key spent', async () => {
      if (!t.reopen) throw new Error('a database backend reopens');
      now = T0;
      expect(await t.store.remember('shared', T0 + 60_000)).toBe(true);
      const other = await t.reopen();
      expect(await other.remember('shared', T0 + 60_000)).toBe(false);
    });
  },
);

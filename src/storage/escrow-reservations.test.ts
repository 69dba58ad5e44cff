import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReservationStore } from '../acmp/escrow/reservations.js';
import { openDatabase } from './database.js';
import {
  acmpEscrowMigrations,
  KyselyReservationStore,
  MemoryReservationStore,
} from './escrow-reservations.js';
import { migrateSets } from './migrations.js';
import { cleanup, onCleanup, tempDir } from '../../test/helpers/host.js';
import { freshPgDatabase } from '../../test/helpers/pg.js';

afterEach(cleanup);

async function kysely(url: string): Promise<ReservationStore> {
  const database = openDatabase({ url, dataDir: '.' });
  onCleanup(() => database.close());
  await migrateSets(database, [acmpEscrowMigrations]);
  return new KyselyReservationStore(database);
}

function contract(name: string, open: () => Promise<ReservationStore>): void {
  describe(`provider escrow reservations on ${name} (one escrow backs one task)`, () => {
    it('holds an escrow for the first task; a retry of that task sees its own reservation', async () => {
      const store = await open();
      expect(await store.reserve({ escrowId: 'esc_1', taskId: 'task_a', amount: 5n, at: 1 })).toMatchObject({
        taskId: 'task_a',
        state: 'reserved',
      });
      expect(await store.reserve({ escrowId: 'esc_1', taskId: 'task_b', amount: 5n, at: 2 })).toMatchObject({
        taskId: 'task_a',
      });
      expect(await store.reserve({ escrowId: 'esc_1', taskId: 'task_a', amount: 5n, at: 3 })).toMatchObject({
        taskId: 'task_a',
        createdAt: 1,
      });
    });

    it('of concurrent reservations for different tasks exactly one wins', async () => {
      const store = await open();
      const held = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.reserve({ escrowId: 'esc_2', taskId: `task_${i}`, amount: 1n, at: i }),
        ),
      );
      expect(new Set(held.map((r) => r.taskId)).size).toBe(1);
    });

    it('moves states by compare-and-set, and a void reservation gives the escrow up', async () => {
      const store = await open();
      await store.reserve({ escrowId: 'esc_3', taskId: 'task_a', amount: 5n, at: 1 });
      expect(
        await store.update('esc_3', 'reserved', {
          state: 'delivered',
          amount: 3n,
          proof: { hash: 'h' },
          claimAfter: 10,
        }),
      ).toBe(true);
      expect(await store.update('esc_3', 'reserved', { state: 'void' })).toBe(false);
      expect(await store.get('esc_3')).toMatchObject({
        state: 'delivered',
        amount: 3n,
        proof: { hash: 'h' },
        claimAfter: 10,
      });
      expect(await store.inState('delivered', 10)).toHaveLength(1);
      await store.update('esc_3', 'delivered', { state: 'void' });
      expect(await store.reserve({ escrowId: 'esc_3', taskId: 'task_b', amount: 4n, at: 5 })).toMatchObject({
        taskId: 'task_b',
        state: 'reserved',
        amount: 4n,
        proof: null,
      });
    });
  });
}

contract('memory', () => Promise.resolve(new MemoryReservationStore()));
contract('SQLite', () => kysely(`sqlite:${join(tempDir(), 'r.sqlite')}`));
describe.skipIf(!process.env.TEST_PG_URL)('PostgreSQL', () => {
  contract('PostgreSQL', async () => kysely(await freshPgDatabase()));
});

import { expect, it } from 'vitest';
import type { ReservationStore } from '../../acmp/escrow/reservations.js';
import { acmpEscrowMigrations, KyselyReservationStore } from './escrow-reservations.js';
import { MemoryReservationStore } from '../memory/escrow-reservations-memory.js';
import { storeContract } from '../../../test/helpers/store-harness.js';

storeContract<ReservationStore>(
  'provider escrow reservations (one escrow backs one task)',
  {
    memory: () => new MemoryReservationStore(),
    kysely: (database) => new KyselyReservationStore(database),
    migrations: [acmpEscrowMigrations],
  },
  (t) => {
    it('holds an escrow for the first task; a retry of that task sees its own reservation', async () => {
      const store = t.store;
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
      const store = t.store;
      const held = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.reserve({ escrowId: 'esc_2', taskId: `task_${i}`, amount: 1n, at: i }),
        ),
      );
      expect(new Set(held.map((r) => r.taskId)).size).toBe(1);
    });

    it('moves states by compare-and-set, and a void reservation gives the escrow up', async () => {
      const store = t.store;
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
  },
);

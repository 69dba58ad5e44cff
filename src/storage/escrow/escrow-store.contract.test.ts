import type { EscrowStore } from '../../acmp/escrow/store.js';
import { KyselyEscrowStore, escrowMigrations } from './escrow-store-kysely.js';
import { MemoryEscrowStore } from '../memory/escrow-store-memory.js';
// The cases and their assertions live in the shared contract (run here on memory, SQLite and PostgreSQL).
import { escrowContract } from '../../../test/helpers/escrow-contract.js';
import { storeContract } from '../../../test/helpers/store-harness.js';

storeContract<EscrowStore>(
  'escrow agent scenarios (Layer 4 §2–§7)',
  {
    memory: () => new MemoryEscrowStore(),
    kysely: (database) => new KyselyEscrowStore(database),
    migrations: [escrowMigrations],
  },
  escrowContract,
);

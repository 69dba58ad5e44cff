import type { WalletStore } from '../../wallet/store.js';
import { KyselyWalletStore, walletMigrations } from './wallet-store-kysely.js';
import { MemoryWalletStore } from '../memory/wallet-store-memory.js';
// The cases and their assertions live in the shared contract (run here on memory, SQLite and PostgreSQL).
import { walletContract } from '../../../test/helpers/wallet-contract.js';
import { storeContract } from '../../../test/helpers/store-harness.js';

storeContract<WalletStore>(
  'the buyer wallet (Layer 7 §6.2–§6.5)',
  {
    memory: () => new MemoryWalletStore(),
    kysely: (database) => new KyselyWalletStore(database),
    migrations: [walletMigrations],
  },
  walletContract,
);

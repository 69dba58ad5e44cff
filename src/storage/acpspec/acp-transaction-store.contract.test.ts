import type { TransactionStore } from '../../acpspec/transaction-store.js';
import { MemoryTransactionStore } from '../memory/acp-transaction-store-memory.js';
import {
  acpMigrations,
  createKyselyTransactionStore,
  KyselyTransactionStore,
} from './acp-transaction-store-kysely.js';
// The cases live in the shared contract (run here on memory, SQLite and PostgreSQL).
import { transactionStoreContract } from '../../../test/helpers/acp-store-contract.js';
import { storeContract } from '../../../test/helpers/store-harness.js';

storeContract<TransactionStore>(
  'TransactionStore contract',
  {
    memory: () => new MemoryTransactionStore(),
    kysely: {
      // What the host uses: on SQLite, batches written on the raw handle.
      'as the host opens it': (database) => createKyselyTransactionStore(database),
      'through Kysely': (database) => new KyselyTransactionStore(database),
    },
    migrations: [acpMigrations],
  },
  transactionStoreContract,
);

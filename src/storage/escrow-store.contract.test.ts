import { join } from 'node:path';
import { afterEach, describe } from 'vitest';
import { openDatabase, type Database } from './database.js';
import { KyselyEscrowStore, escrowMigrations } from './escrow-store-kysely.js';
import { MemoryEscrowStore } from './escrow-store-memory.js';
import { migrateSets } from './migrations.js';
// The cases and their assertions live in the shared contract (run here on memory, SQLite and PostgreSQL).
import { escrowContract } from '../../test/helpers/escrow-contract.js';
import { cleanup, onCleanup, tempDir } from '../../test/helpers/host.js';
import { freshPgDatabase } from '../../test/helpers/pg.js';

afterEach(cleanup);

async function kysely(
  url: string,
): Promise<{ store: KyselyEscrowStore; reopen: () => Promise<KyselyEscrowStore> }> {
  const open = async (): Promise<KyselyEscrowStore> => {
    const database: Database = openDatabase({ url, dataDir: '.' });
    await migrateSets(database, [escrowMigrations]);
    const store = new KyselyEscrowStore(database);
    await store.open();
    onCleanup(async () => {
      await store.close();
      await database.close();
    });
    return store;
  };
  return { store: await open(), reopen: open };
}

escrowContract('memory', () => Promise.resolve({ store: new MemoryEscrowStore() }));
escrowContract('SQLite', () => kysely(`sqlite:${join(tempDir(), 'escrow.sqlite')}`));
describe.skipIf(!process.env.TEST_PG_URL)('PostgreSQL', () => {
  escrowContract('PostgreSQL', async () => kysely(await freshPgDatabase()));
});

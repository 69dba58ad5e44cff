import { dirname } from 'node:path';
import type { Clock } from '../shared/clock.js';
import type { IdSource } from '../shared/ids.js';
import { openDatabase } from '../storage/sql/database.js';
import { migrateSets } from '../storage/sql/migrations.js';
import { KyselyWalletStore, walletMigrations } from '../storage/wallet/wallet-store-kysely.js';
import { loadWalletConfig } from '../wallet/limits.js';
import { Wallet } from '../wallet/wallet.js';

/** An open wallet and the database under it. */
export interface OpenWallet {
  readonly wallet: Wallet;
  /** A printable location of the store (no password). */
  readonly location: string;
  readonly close: () => Promise<void>;
}

/**
 * Opens the operator's wallet (docs/acmp-wallet.md): its limits and its store both come from the
 * operator's file — the store too, because a process that could point the wallet at a fresh database
 * could forget what it spent. The store's tables are created or brought up to date (SQLite and
 * PostgreSQL; `a2a-commerce wallet migrate` does it ahead of time).
 * @throws LocalError `CONFIG_INVALID` for the file (loadWalletConfig); the database's errors.
 */
export async function openWallet(options: {
  limitsFile: string;
  clock?: Clock;
  ids?: IdSource;
}): Promise<OpenWallet> {
  const config = loadWalletConfig(options.limitsFile);
  const database = openDatabase({ url: config.store, dataDir: dirname(options.limitsFile) });
  try {
    await migrateSets(database, [walletMigrations]);
  } catch (error) {
    await database.close();
    throw error;
  }
  const wallet = new Wallet(config, new KyselyWalletStore(database), {
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.ids ? { ids: options.ids } : {}),
  });
  return { wallet, location: database.location, close: () => database.close() };
}

import { parseArgs } from 'node:util';
import { resolveHostConfig, resolveStorageConfig } from '../server/config.js';
import { migrateAll } from '../server/host-migrations.js';
import { storageModules } from './host-modules.js';
import { openDatabase } from '../storage/sql/database.js';
import { UsageError, type CliIo } from './io.js';

export const MIGRATE_USAGE = `Usage: a2a-commerce migrate [--db <url>] [--data-dir <dir>]

Applies every pending migration (the SDK's task and push-notification tables, then each binding's
tables) to the database named by --db or A2AC_DB (postgres://… or sqlite:<file>; default: SQLite
under the data dir). Safe to re-run.`;

/** `a2a-commerce migrate`. */
export async function migrate(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { db: { type: 'string' }, 'data-dir': { type: 'string' } },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const storage = resolveStorageConfig({ db: values.db, 'data-dir': values['data-dir'] }, io.env);
  if (storage.db === 'memory') throw new UsageError('memory stores need no migration');
  const database = openDatabase({ url: storage.db, dataDir: storage.dataDir });
  try {
    // The bindings' tables do not depend on TLS or tokens: their modules are built from a neutral config.
    const modules = storageModules(
      resolveHostConfig({ db: storage.db, 'data-dir': storage.dataDir, 'no-tls': true }, {}),
    );
    const applied = await migrateAll(database, modules);
    io.out(`migrated ${database.location}: SDK stores up to date; ${applied.length} migration(s) applied`);
    for (const name of applied) io.out(`  applied ${name}`);
    return 0;
  } finally {
    await database.close();
  }
}

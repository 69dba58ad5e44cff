import { parseArgs } from 'node:util';
import { resolveHostConfig } from '../server/config.js';
import { migrateAll } from '../server/host.js';
import { defaultModules } from '../server/modules.js';
import { openDatabase, redactUrl } from '../storage/database.js';
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
  const config = resolveHostConfig({ db: values.db, 'data-dir': values['data-dir'], 'no-tls': true }, io.env);
  if (config.db === 'memory') throw new UsageError('memory stores need no migration');
  const database = openDatabase({ url: config.db, dataDir: config.dataDir });
  try {
    const applied = await migrateAll(database, defaultModules(config));
    io.out(`migrated ${database.location}: SDK stores up to date; ${applied.length} binding migration(s) applied`);
    for (const name of applied) io.out(`  applied ${name}`);
    return 0;
  } finally {
    await database.close();
  }
}

export { redactUrl };

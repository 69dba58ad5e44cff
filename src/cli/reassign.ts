import { parseArgs } from 'node:util';
import { isIdentity } from '../shared/identity.js';
import { resolveHostConfig, resolveStorageConfig } from '../server/config.js';
import { ownerColumnsOf } from '../server/host-migrations.js';
import { storageModules } from './host-modules.js';
import { openDatabase } from '../storage/sql/database.js';
import { reassignOwner } from '../storage/sql/owner-columns.js';
import { UsageError, type CliIo } from './io.js';

export const REASSIGN_USAGE = `Usage: a2a-commerce reassign --from <identity> --to <identity> [--db <url>] [--data-dir <dir>]

Moves every task, push-notification config and ACPspec transaction owned by one caller identity to
another, in one transaction, in the database named by --db or A2AC_DB (default: SQLite under the data
dir). Identities: agent:<name>, token:<32 hex digits>, anonymous, legacy:token-<n> (docs/host.md).
Typical use, after upgrading from a release that named callers by position:
  a2a-commerce reassign --from legacy:token-0 --to agent:alice
Run it after 'migrate', for rows no running task still writes (legacy rows qualify).`;

/** `a2a-commerce reassign`: gives one identity's rows to another (operators' fix for legacy owners). */
export async function reassign(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      db: { type: 'string' },
      'data-dir': { type: 'string' },
    },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const { from, to } = values;
  if (from === undefined || to === undefined) throw new UsageError('--from and --to are required');
  if (from === to) throw new UsageError('--from and --to name the same identity');
  if (!isIdentity(to))
    throw new UsageError(
      `--to "${to}" is not an identity (agent:<name>, token:<32 hex>, anonymous, legacy:token-<n>)`,
    );
  const storage = resolveStorageConfig({ db: values.db, 'data-dir': values['data-dir'] }, io.env);
  if (storage.db === 'memory') throw new UsageError('memory stores keep nothing to reassign');
  const database = openDatabase({ url: storage.db, dataDir: storage.dataDir });
  try {
    const modules = storageModules(
      resolveHostConfig({ db: storage.db, 'data-dir': storage.dataDir, 'no-tls': true }, {}),
    );
    const moved = await reassignOwner(database.db, ownerColumnsOf(modules), { from, to });
    io.out(`reassigned ${from} → ${to} in ${database.location}`);
    for (const { table, rows } of moved) io.out(`  ${table}: ${rows}`);
    return 0;
  } finally {
    await database.close();
  }
}

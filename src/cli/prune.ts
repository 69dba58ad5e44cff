import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { systemClock } from '../shared/clock.js';
import { LocalError } from '../shared/errors.js';
import { hostPruner } from '../server/background-pruner.js';
import { resolveStorageConfig } from '../server/config.js';
import { parseDuration, resolveRetention, type RetentionConfig } from '../server/retention-config.js';
import { probeDatabase } from '../storage/sql/database-check.js';
import { openDatabase, resolveDatabaseTarget } from '../storage/sql/database.js';
import type { PruneCount, PruneKind } from '../storage/retention/policy.js';
import { UsageError, type CliIo } from './io.js';

export const PRUNE_USAGE = `Usage: a2a-commerce prune [--dry-run] [--older-than <age>] [--db <url>] [--data-dir <dir>]

Removes ended work past its retention age (docs/operations.md "Retention") from the database named by
--db or A2AC_DB (postgres://… or sqlite:<file>; default: SQLite under the data dir), in batches, and
reports what went, table by table. A host prunes by itself on its interval; this is the same pass, now.
Escrow records, wallet ledgers, ACPspec events and audit logs are never pruned.

  --dry-run           count what would go, table by table; change nothing
  --older-than <age>  prune tasks, sessions and A2A tasks that ended longer ago than this (7d, 36h; at
                      least 1h). Default: the host's ages (A2AC_RETAIN_TASKS, A2AC_RETAIN_SESSIONS, 7d).
                      Pruned task ids are forgotten A2AC_RETAIN_TASK_IDS (30d) after their pruning
  --db <url>          the database (A2AC_DB)
  --data-dir <dir>    the data directory of the default SQLite file (A2AC_DATA_DIR, default .data)

Batches: A2AC_PRUNE_BATCH rows per statement (500), A2AC_PRUNE_PAUSE between statements (100ms). On
PostgreSQL one pass runs at a time: a prune started while a host prunes waits for it.`;

const LABELS: Record<PruneKind, string> = {
  task_results: 'results of finished ACMP tasks (their ids are kept)',
  task_chunks: 'stream chunks of those tasks',
  task_ids: 'ACMP task ids past their age',
  sessions: 'ended negotiation sessions',
  a2a_tasks: 'ended A2A tasks',
  a2a_push_configs: 'push-notification configs of those tasks',
};

/** The ages of a prune: the host's, or `--older-than` for every ended kind but task ids (counted from their pruning). */
function retentionOf(olderThan: string | undefined, env: CliIo['env']): RetentionConfig {
  const retention = resolveRetention({}, env);
  if (olderThan === undefined) return retention;
  const age = parseDuration('--older-than', olderThan, [3_600_000, 3650 * 86_400_000]);
  return { ...retention, ages: { ...retention.ages, tasksMs: age, sessionsMs: age } };
}

/** `a2a-commerce prune`. */
export async function prune(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      'dry-run': { type: 'boolean' },
      'older-than': { type: 'string' },
      db: { type: 'string' },
      'data-dir': { type: 'string' },
    },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const retention = retentionOf(values['older-than'], io.env);
  const storage = resolveStorageConfig({ db: values.db, 'data-dir': values['data-dir'] }, io.env);
  if (storage.db === 'memory') throw new UsageError('memory stores keep nothing to prune');
  const target = resolveDatabaseTarget(storage.db, storage.dataDir);
  // Pruning a file that is not there would create an empty database: a mistyped path is an error.
  if (target.dialect === 'sqlite' && !existsSync(target.file))
    throw new LocalError('CONFIG_INVALID', `no SQLite database at ${target.file}: check --db or --data-dir`);
  const database = openDatabase({ url: storage.db, dataDir: storage.dataDir });
  try {
    await probeDatabase(database);
    const pruner = hostPruner(database, retention, systemClock);
    if (values['dry-run']) {
      report(io, await pruner.plan(), {
        title: `dry run on ${database.location}: nothing is changed`,
        verb: 'would go',
      });
      return 0;
    }
    let run = await pruner.prune();
    if (!run.ran) {
      io.out('another pruner (a host) is running a pass on this database: waiting for it to finish');
      run = await pruner.prune({ wait: true });
    }
    report(io, run.counts, { title: `pruned ${database.location}`, verb: 'removed' });
    return 0;
  } finally {
    await database.close();
  }
}

function report(io: CliIo, counts: readonly PruneCount[], words: { title: string; verb: string }): void {
  io.out(words.title);
  const width = Math.max(0, ...counts.map((c) => c.table.length));
  const digits = Math.max(1, ...counts.map((c) => String(c.rows).length));
  for (const c of counts)
    io.out(`  ${c.table.padEnd(width)}  ${String(c.rows).padStart(digits)}  ${LABELS[c.kind]}`);
  const total = counts.reduce((sum, c) => sum + c.rows, 0);
  io.out(counts.length === 0 ? 'every age is off: nothing to prune' : `${total} row(s) ${words.verb}`);
}

import type { Clock } from '../../shared/clock.js';
import { LocalError } from '../../shared/errors.js';
import type { Database } from '../sql/database.js';
import { bindSql, SqlRunner, type BoundSql } from '../sql/query.js';
import type { SdkStoreTables } from '../a2a/sdk-store-migrations.js';
import { AcmpTaskRetention, type TaskCuts } from './acmp-task-retention.js';
import type { BatchLoop } from './batches.js';
import { PgPruneLock } from './pg-lock.js';
import type { PruneBatching, PruneCount, RetentionAges } from './policy.js';
import { SdkTaskRetention, SessionRetention } from './row-retention.js';

/** What a {@link Pruner} prunes, and how it paces itself. */
export interface PrunerOptions {
  readonly ages: RetentionAges;
  readonly batching: PruneBatching;
  /** The SDK store's table names (src/a2a/host/sdk-stores.ts). */
  readonly sdkTables: SdkStoreTables;
  readonly clock: Clock;
}

/** A pass: whether it ran (on PostgreSQL another pruner may hold the lock), and what it removed. */
export interface PruneRun {
  readonly ran: boolean;
  readonly counts: readonly PruneCount[];
}

/** The retention stages a database has tables for (a host serves some modules only). */
interface Stages {
  readonly tasks: AcmpTaskRetention | undefined;
  readonly sessions: SessionRetention | undefined;
  readonly sdkTasks: SdkTaskRetention | undefined;
}

/**
 * Prunes ended work past its age (docs/operations.md "Retention") from the tables the database has:
 * ACMP tasks and their chunks, negotiation sessions, the SDK's ended tasks. Every statement is a short
 * one on at most a batch of rows, with a pause after it; nothing locks a table or holds a transaction
 * open. On PostgreSQL one pass runs at a time over every host and CLI (an advisory lock,
 * {@link PgPruneLock}); SQLite has one host, and the statements are idempotent if a CLI prunes beside it.
 * Escrow, wallet, ACPspec and audit tables are never read or written here.
 */
export class Pruner {
  private readonly sql: BoundSql;

  constructor(
    private readonly database: Pick<Database, 'db' | 'dialect' | 'url'>,
    private readonly options: PrunerOptions,
  ) {
    this.sql = bindSql(new SqlRunner(database.dialect), database.db);
  }

  /** What a pass now would remove, table by table (a dry run: nothing is changed, no lock is taken). */
  async plan(): Promise<PruneCount[]> {
    const stages = await this.stages();
    const now = this.options.clock.now();
    const counts: PruneCount[] = [];
    const cuts = this.taskCuts(now);
    if (stages.tasks) counts.push(...(await stages.tasks.count(cuts)));
    const sessionsBefore = this.before(now, this.options.ages.sessionsMs);
    if (stages.sessions && sessionsBefore !== null) counts.push(await stages.sessions.count(sessionsBefore));
    if (stages.sdkTasks && cuts.resultsBefore !== null)
      counts.push(...(await stages.sdkTasks.count(cuts.resultsBefore)));
    return counts;
  }

  /**
   * One pass. On PostgreSQL it first takes the pruning lock: `wait` false skips the pass when another
   * pruner holds it (`ran: false`), `wait` true waits for it.
   * @throws LocalError `DATABASE_NOT_MIGRATED` when the ACMP tables lack the retention migration.
   */
  async prune(options: { signal?: AbortSignal; wait?: boolean } = {}): Promise<PruneRun> {
    const lock =
      this.database.dialect === 'postgres'
        ? await PgPruneLock.acquire(this.database.url, { wait: options.wait ?? false })
        : undefined;
    if (this.database.dialect === 'postgres' && !lock) return { ran: false, counts: [] };
    try {
      return { ran: true, counts: await this.pass(options.signal) };
    } finally {
      await lock?.release();
    }
  }

  private async pass(signal: AbortSignal | undefined): Promise<PruneCount[]> {
    const stages = await this.stages();
    const now = this.options.clock.now();
    const loop: BatchLoop = { batching: this.options.batching, signal };
    const counts: PruneCount[] = [];
    const cuts = this.taskCuts(now);
    if (stages.tasks) counts.push(...(await stages.tasks.prune(cuts, loop)));
    const sessionsBefore = this.before(now, this.options.ages.sessionsMs);
    if (stages.sessions && sessionsBefore !== null)
      counts.push(await stages.sessions.prune(sessionsBefore, loop));
    if (stages.sdkTasks && cuts.resultsBefore !== null)
      counts.push(...(await stages.sdkTasks.prune(cuts.resultsBefore, loop)));
    return counts;
  }

  private taskCuts(now: number): TaskCuts {
    return {
      now,
      resultsBefore: this.before(now, this.options.ages.tasksMs),
      idsBefore: this.before(now, this.options.ages.taskIdsMs),
    };
  }

  private before(now: number, age: number | null): number | null {
    return age === null ? null : now - age;
  }

  /** The stages whose tables exist, checked on every pass (a migration may have added some since). */
  private async stages(): Promise<Stages> {
    const tables = await this.database.db.introspection.getTables();
    const columns = new Map(tables.map((t) => [t.name, new Set(t.columns.map((c) => c.name))]));
    const tasks = columns.get('acmp_tasks');
    if (tasks && !tasks.has('pruned_at'))
      throw new LocalError(
        'DATABASE_NOT_MIGRATED',
        'the ACMP tables lack the retention migration (acmp/0007_retention): run a2a-commerce migrate',
      );
    const sdk = this.options.sdkTables;
    return {
      tasks:
        tasks && columns.has('acmp_task_chunks')
          ? new AcmpTaskRetention(this.sql, {
              dialect: this.database.dialect,
              escrowReservations: columns.has('acmp_escrow_reservations'),
            })
          : undefined,
      sessions: columns.has('acmp_sessions') ? new SessionRetention(this.sql) : undefined,
      sdkTasks:
        columns.has(sdk.tasks) && columns.has(sdk.pushNotificationConfigs)
          ? new SdkTaskRetention(this.sql, { dialect: this.database.dialect, tables: sdk })
          : undefined,
    };
  }
}

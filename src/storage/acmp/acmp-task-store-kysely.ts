import { SignalHub } from '../../acmp/provider/signal-hub.js';
import type { Payload } from '../../acmp/wire/task-messages.js';
import type {
  AcmpTaskRecord,
  AcmpTaskStore,
  AppendChunks,
  ClaimOutcome,
  FinishTask,
  HostBeat,
  NewAcmpTask,
  TaskListQuery,
  TaskScope,
  TaskSignal,
} from '../../acmp/provider/task-store.js';
import { errorFields, silentLogger, type Logger } from '../../shared/logger.js';
import { NO_METRICS, type Metrics } from '../../shared/metrics.js';
import { observedCommit } from '../sql/observed-commit.js';
import { AcmpTaskCommits } from './acmp-task-commits.js';
import { decodeChunk, decodeTaskRow, encodeSignal, decodeSignal, TASK_COLUMNS } from './acmp-task-rows.js';
import type { Database, SqlDialect } from '../sql/database.js';
import { lagProbe, PgListener } from '../sql/pg-listener.js';
import { column, count, ignoredRow, sqlQuery, SqlRunner, text, type SqlKysely } from '../sql/query.js';

export { ACMP_OWNER_COLUMNS, acmpMigrations } from './acmp-migrations.js';

const GET = sqlQuery(`SELECT ${TASK_COLUMNS} FROM acmp_tasks WHERE task_id = $1`, (row) =>
  decodeTaskRow(row),
);
const CHUNKS = sqlQuery(
  `SELECT chunk FROM acmp_task_chunks WHERE task_id = $1 AND seq >= $2 ORDER BY seq`,
  decodeChunk,
);
const ORPHANS = sqlQuery(
  `SELECT t.task_id AS task_id FROM acmp_tasks t LEFT JOIN acmp_hosts h ON h.host_id = t.host_id
       WHERE t.state = 'running' AND ((h.host_id IS NULL AND t.created_at < $1) OR h.alive_at < $2) LIMIT $3`,
  column('task_id', text),
);
/** The PostgreSQL channel task signals travel on. */
const ACMP_SIGNAL_CHANNEL = 'acmp_task_signals';

/**
 * {@link AcmpTaskStore} on SQLite or PostgreSQL. Each statement is written once, with `$n` placeholders
 * in order (rewritten to `?` for SQLite). Claims and outcomes are group-committed (acmp-task-commits.ts):
 * a claim is one `INSERT … ON CONFLICT DO NOTHING` (with a cap, `INSERT … SELECT … WHERE <the caller's
 * running tasks> < cap`, on PostgreSQL under an advisory lock on the caller), every change of state one
 * conditional UPDATE (compare-and-set on `state = 'running'`), so any number of hosts can
 * share the tables. On PostgreSQL the signal of a change is a NOTIFY issued by the very statement that
 * makes the change (it is delivered on commit, after the data is visible), received through a LISTEN
 * connection; on SQLite signals stay in the process and other processes rely on fallback reads.
 */
export class KyselyAcmpTaskStore implements AcmpTaskStore {
  private readonly db: SqlKysely;
  private readonly sql: SqlRunner;
  private readonly dialect: SqlDialect;
  private readonly hub = new SignalHub();
  private readonly listener: PgListener | undefined;
  private readonly logger: Logger;
  private readonly metrics: Metrics;
  private readonly commits: AcmpTaskCommits;

  constructor(
    database: Pick<Database, 'db' | 'dialect' | 'url' | 'listens' | 'sqlite'>,
    options: { logger?: Logger; metrics?: Metrics } = {},
  ) {
    this.db = database.db;
    this.dialect = database.dialect;
    this.sql = new SqlRunner(database.dialect);
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics ?? NO_METRICS;
    this.commits = new AcmpTaskCommits(
      { db: this.db, dialect: this.dialect, ...(database.sqlite ? { sqlite: database.sqlite } : {}) },
      { metrics: this.metrics, channel: ACMP_SIGNAL_CHANNEL },
    );
    if (this.dialect === 'postgres') {
      this.listener = new PgListener({
        url: database.url,
        channel: ACMP_SIGNAL_CHANNEL,
        logger: this.logger,
        connections: database.listens,
        onPayload: (payload) => {
          const signal = decodeSignal(payload);
          if (signal) this.hub.emit(signal);
        },
        onResync: () => this.hub.resync(),
        ...lagProbe(this.db, ACMP_SIGNAL_CHANNEL, options.metrics),
      });
    }
  }

  /** Opens the notification connection (PostgreSQL); call before serving. */
  async open(): Promise<void> {
    await this.listener?.start();
  }

  async close(): Promise<void> {
    await this.listener?.close();
  }

  async claim(task: NewAcmpTask, maxRunning?: number): Promise<ClaimOutcome> {
    // Group commit (acmp-task-commits.ts): acknowledged once the transaction holding it committed.
    if (await this.commits.claim(task, maxRunning)) return { claimed: true };
    // Scope and params hash never change once inserted, so this read decides as the insert would have.
    const existing = await this.get(task.taskId);
    if (existing) return { claimed: false, existing };
    if (maxRunning === undefined) throw new Error('claimed task row vanished');
    return { claimed: false, capReached: true };
  }

  async get(taskId: string): Promise<AcmpTaskRecord | undefined> {
    return this.sql.first(this.db, GET, [taskId]);
  }

  async chunks(taskId: string, from: number): Promise<Payload[]> {
    return this.sql.rows(this.db, CHUNKS, [taskId, from]);
  }

  async appendChunks(taskId: string, append: AppendChunks): Promise<boolean> {
    const { hostId, from, chunks } = append;
    if (chunks.length === 0) return true;
    const count = from + chunks.length;
    const n = chunks.length * 2;
    const values = chunks.map((_, i) => `($1::text, $${i * 2 + 2}::integer, $${i * 2 + 3}::text)`).join(', ');
    const guard = `UPDATE acmp_tasks SET chunk_count = $${n + 2}
      WHERE task_id = $1 AND state = 'running' AND host_id = $${n + 3} AND chunk_count = $${n + 4} RETURNING task_id`;
    const params = [
      taskId,
      ...chunks.flatMap((chunk, i) => [from + i, JSON.stringify(chunk)]),
      count,
      hostId,
      from,
    ];
    const write = { guard, values, params, signal: encodeSignal({ kind: 'chunks', taskId, count }) };
    const moved = await observedCommit(
      this.metrics,
      { operation: 'acmp_chunks', dialect: this.dialect },
      () => this.writeChunks(write),
    );
    if (moved && this.dialect !== 'postgres') this.hub.emit({ kind: 'chunks', taskId, count });
    return moved;
  }

  /** The guarded write of {@link appendChunks} in one commit (on PostgreSQL with its NOTIFY). */
  private async writeChunks(write: {
    guard: string;
    values: string;
    params: unknown[];
    signal: string;
  }): Promise<boolean> {
    const { guard, values, params } = write;
    // The chunk placeholders, then count, host and `from`: the signal's is the next one.
    const signalAt = params.length + 1;
    if (this.dialect === 'postgres') {
      // One statement: the guard, the chunk rows and the signal commit together or not at all.
      const rows = await this.sql.rows(
        this.db,
        sqlQuery(
          `WITH guard AS (${guard}),
         fresh (task_id, seq, chunk) AS (VALUES ${values}),
         added AS (INSERT INTO acmp_task_chunks (task_id, seq, chunk) SELECT f.task_id, f.seq, f.chunk FROM fresh f, guard RETURNING 1)
         SELECT pg_notify('${ACMP_SIGNAL_CHANNEL}', $${signalAt}) FROM guard`,
          ignoredRow,
        ),
        [...params, write.signal],
      );
      return rows.length === 1;
    }
    return this.db.transaction().execute(async (trx) => {
      if ((await this.sql.rows(trx, sqlQuery(guard, ignoredRow), params)).length !== 1) return false;
      await this.sql.exec(trx, `INSERT INTO acmp_task_chunks (task_id, seq, chunk) VALUES ${values}`, params);
      return true;
    });
  }

  async finish(
    taskId: string,
    finish: FinishTask,
  ): Promise<{ won: boolean; record: AcmpTaskRecord } | undefined> {
    const signal = encodeSignal({ kind: 'finished', taskId });
    const row = await this.commits.finish({ taskId, finish, signal });
    if (row !== null) {
      if (this.dialect !== 'postgres') this.hub.emit({ kind: 'finished', taskId });
      return { won: true, record: decodeTaskRow(row, finish.outcome) };
    }
    const record = await this.get(taskId);
    return record && { won: false, record };
  }

  heartbeat(taskId: string, progress?: number, detail?: string): void {
    const signal: TaskSignal = {
      kind: 'heartbeat',
      taskId,
      ...(progress !== undefined ? { progress } : {}),
      ...(detail !== undefined ? { detail } : {}),
    };
    if (this.dialect !== 'postgres') {
      this.hub.emit(signal);
      return;
    }
    this.sql
      .exec(this.db, `SELECT pg_notify('${ACMP_SIGNAL_CHANNEL}', $1)`, [encodeSignal(signal)])
      .catch((error: unknown) =>
        this.logger.warn('acmp.heartbeat_signal_failed', { task_id: taskId, ...errorFields(error) }),
      );
  }

  watch(taskId: string, listener: (signal: TaskSignal) => void): () => void {
    return this.hub.watch(taskId, listener);
  }

  async list(scope: TaskScope, query: TaskListQuery): Promise<{ records: AcmpTaskRecord[]; total: number }> {
    const params: unknown[] = [scope.tenant, scope.agent];
    const next = (value: unknown): string => `$${params.push(value)}`;
    const where = ['tenant = $1', 'agent = $2'];
    if (query.contextId !== undefined) where.push(`context_id = ${next(query.contextId)}`);
    if (query.updatedAfter !== undefined) where.push(`updated_at > ${next(query.updatedAfter)}`);
    if (query.state === 'running') where.push(`state = 'running'`);
    else if (query.state !== undefined) where.push(`state = 'finished' AND end_state = ${next(query.state)}`);
    const total = await this.sql.first(
      this.db,
      sqlQuery(
        `SELECT COUNT(*) AS total FROM acmp_tasks WHERE ${where.join(' AND ')}`,
        column('total', count),
      ),
      params,
    );
    const after = query.after;
    if (after) {
      const at = next(after.updatedAt);
      where.push(
        `(updated_at < ${at} OR (updated_at = ${next(after.updatedAt)} AND task_id < ${next(after.taskId)}))`,
      );
    }
    const records = await this.sql.rows(
      this.db,
      sqlQuery(
        `SELECT ${TASK_COLUMNS} FROM acmp_tasks WHERE ${where.join(' AND ')} ORDER BY updated_at DESC, task_id DESC LIMIT ${next(query.limit)}`,
        (row) => decodeTaskRow(row),
      ),
      params,
    );
    return { records, total: total ?? 0 };
  }

  async beat(host: HostBeat): Promise<void> {
    await this.sql.exec(
      this.db,
      `INSERT INTO acmp_hosts (host_id, alive_at, started_at) VALUES ($1, $2, $3) ON CONFLICT (host_id) DO UPDATE SET alive_at = excluded.alive_at`,
      [host.hostId, host.at, host.at],
    );
  }

  async retire(hostId: string): Promise<void> {
    await this.sql.exec(this.db, `DELETE FROM acmp_hosts WHERE host_id = $1`, [hostId]);
  }

  async orphans(staleBefore: number, limit: number): Promise<string[]> {
    return this.sql.rows(this.db, ORPHANS, [staleBefore, staleBefore, limit]);
  }

  async lost(hostId: string, taskIds: readonly string[]): Promise<string[]> {
    if (taskIds.length === 0) return [];
    const placeholders = taskIds.map((_, i) => `$${i + 2}`).join(', ');
    const rows = await this.sql.rows(
      this.db,
      sqlQuery(
        `SELECT task_id FROM acmp_tasks WHERE state = 'running' AND host_id = $1 AND task_id IN (${placeholders})`,
        column('task_id', text),
      ),
      [hostId, ...taskIds],
    );
    const running = new Set(rows);
    return taskIds.filter((id) => !running.has(id));
  }
}

import type BetterSqlite3 from 'better-sqlite3';
import type { FinishTask, NewAcmpTask } from '../../acmp/provider/task-store.js';
import { LocalError } from '../../shared/errors.js';
import type { Metrics, StoreOperation } from '../../shared/metrics.js';
import type { SqlDialect } from '../sql/database.js';
import { GroupCommitter } from '../sql/group-commit.js';
import { observedCommit } from '../sql/observed-commit.js';
import { TASK_COLUMNS } from './acmp-task-rows.js';
import { dialectSql, type DialectSql, type RunSql, type Statement } from '../sql/sql-text.js';
import { SqliteTransactions } from '../sql/sqlite-batch.js';
import { column, runOn, text, type RowDecoder, type SqlKysely } from '../sql/query.js';

/** A finished task's row as the compare-and-set returned it: its reader decodes it (decodeTaskRow). */
type Row = object;

/** One claim of {@link AcmpTaskCommits.claim}. */
interface ClaimItem {
  readonly task: NewAcmpTask;
  readonly maxRunning: number | undefined;
}

/** One compare-and-set of {@link AcmpTaskCommits.finish}. */
interface FinishItem {
  readonly taskId: string;
  readonly finish: FinishTask;
  /** The NOTIFY payload (PostgreSQL). */
  readonly signal: string;
}

const COLUMNS =
  'task_id, tenant, agent, params_hash, context_id, request, host_id, state, created_at, deadline_at, updated_at, chunk_count';
const CLAIM = `INSERT INTO acmp_tasks (${COLUMNS})
  VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', $8, $9, $10, 0) ON CONFLICT (task_id) DO NOTHING RETURNING task_id`;
const CAPPED_CLAIM = `INSERT INTO acmp_tasks (${COLUMNS})
  SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, 'running', $8::bigint, $9::bigint, $10::bigint, 0
  WHERE (SELECT COUNT(*) FROM acmp_tasks WHERE agent = $11 AND state = 'running') < $12
  ON CONFLICT (task_id) DO NOTHING RETURNING task_id`;
const CALLER_LOCK = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`;
/** The row of a claim that inserted (its `RETURNING task_id`). */
const CLAIMED = column('task_id', text);
/** The lock's row, whose value is not read. */
const LOCKED: RowDecoder<null> = () => null;
/**
 * The finished row: an object, whose columns its reader decodes with the outcome it wrote (decodeTaskRow
 * in the store), so they are not parsed twice.
 */
const FINISHED: RowDecoder<Row> = (row) => {
  if (typeof row !== 'object' || row === null)
    throw new LocalError('INVALID_STATE', 'acmp_tasks row is malformed');
  return row;
};
const update = (owned: boolean): string =>
  `UPDATE acmp_tasks SET state = 'finished', outcome = $1, end_state = $2, finished_at = $3, updated_at = $3
   WHERE task_id = $4 AND state = 'running'${owned ? ' AND host_id = $5' : ''} RETURNING ${TASK_COLUMNS}`;

/**
 * Group commit of ACMP claims and outcomes (docs/performance.md "The lean invoke path"): the claims
 * (and, apart from them, the outcomes) that concurrent invokes submit while a batch is being written are
 * written together in one database transaction, as ACPspec ingest does (src/storage/sql/group-commit.ts).
 * Each item keeps its own statement and result; its submitter hears back only once the transaction that
 * holds it has committed, so an invoke is acknowledged only after its record is as durable as the
 * database makes a commit. A failed batch is written again item by item.
 */
export class AcmpTaskCommits {
  private readonly claims: GroupCommitter<ClaimItem, boolean>;
  private readonly finishes: GroupCommitter<FinishItem, Row | null>;
  private readonly statements = new Map<string, DialectSql>();
  private readonly transact: <T>(body: (run: RunSql) => Promise<T>) => Promise<T>;

  constructor(
    private readonly database: { db: SqlKysely; dialect: SqlDialect; sqlite?: BetterSqlite3.Database },
    private readonly options: { metrics: Metrics; channel: string },
  ) {
    const sqlite =
      database.sqlite === undefined ? undefined : new SqliteTransactions(database.db, database.sqlite);
    this.transact = sqlite
      ? (body) => sqlite.execute((sql) => body(sql.run))
      : (body) => database.db.transaction().execute((trx) => body(runOn(trx)));
    const lanes = database.dialect === 'postgres' ? 4 : 1;
    this.claims = new GroupCommitter(
      (batch) => this.observed('acmp_claim', batch, this.writeClaims),
      byTask,
      {
        maxBatch: 64,
        lanes,
      },
    );
    this.finishes = new GroupCommitter(
      (batch) => this.observed('acmp_outcome', batch, this.writeFinishes),
      (item) => item.taskId,
      { maxBatch: 64, lanes },
    );
  }

  /** Claims a task id; true when this claim inserted the row. Resolves once its batch committed. */
  claim(task: NewAcmpTask, maxRunning: number | undefined): Promise<boolean> {
    return this.claims.submit({ task, maxRunning });
  }

  /** The compare-and-set running → finished; the row as written, or null when it did not apply. */
  finish(item: FinishItem): Promise<Row | null> {
    return this.finishes.submit(item);
  }

  private observed<T, R>(
    operation: StoreOperation,
    batch: readonly T[],
    write: (run: RunSql, batch: readonly T[]) => Promise<R[]>,
  ): Promise<R[]> {
    const commit = { operation, dialect: this.database.dialect, batchSize: batch.length };
    return observedCommit(this.options.metrics, commit, () => this.transact((run) => write(run, batch)));
  }

  private readonly writeClaims = async (run: RunSql, batch: readonly ClaimItem[]): Promise<boolean[]> => {
    if (this.database.dialect === 'postgres') {
      // A statement that counts and inserts does not hold a cap under READ COMMITTED: each capped caller's
      // advisory lock, taken in one order by every host (fewer deadlocks between batches), serialises them.
      const agents = [
        ...new Set(batch.filter((i) => i.maxRunning !== undefined).map((i) => i.task.scope.agent)),
      ];
      for (const agent of agents.sort())
        await run(this.statement(CALLER_LOCK, LOCKED), [JSON.stringify(['acmp_tasks.running', agent])]);
    }
    const results: boolean[] = [];
    for (const { task, maxRunning } of batch) {
      const values = [
        task.taskId,
        task.scope.tenant,
        task.scope.agent,
        task.paramsHash,
        task.contextId,
        task.request,
        task.hostId,
        task.createdAt,
        task.deadlineAt,
        task.createdAt,
      ];
      const rows =
        maxRunning === undefined
          ? await run(this.statement(CLAIM, CLAIMED), values)
          : await run(this.statement(CAPPED_CLAIM, CLAIMED), [...values, task.scope.agent, maxRunning]);
      results.push(rows.length === 1);
    }
    return results;
  };

  private readonly writeFinishes = async (
    run: RunSql,
    batch: readonly FinishItem[],
  ): Promise<(Row | null)[]> => {
    const results: (Row | null)[] = [];
    for (const { taskId, finish, signal } of batch) {
      const owned = finish.hostId !== undefined;
      const params: unknown[] = [JSON.stringify(finish.outcome), finish.end, finish.at, taskId];
      if (owned) params.push(finish.hostId);
      const text =
        this.database.dialect === 'postgres'
          ? `WITH done AS (${update(owned)}) SELECT done.*, pg_notify('${this.options.channel}', $${params.length + 1}) AS signal FROM done`
          : update(owned);
      const rows = await run(
        this.statement(text, FINISHED),
        this.database.dialect === 'postgres' ? [...params, signal] : params,
      );
      results.push(rows[0] ?? null);
    }
    return results;
  };

  /** The statement of `text` in the dialect's form (compiled once per text), with the decoder of its rows. */
  private statement<R>(text: string, decode: RowDecoder<R>): Statement<R> {
    let form = this.statements.get(text);
    if (!form) {
      form = dialectSql(this.database.dialect, text);
      this.statements.set(text, form);
    }
    return { ...form, decode };
  }
}

const byTask = (item: ClaimItem): string => item.task.taskId;

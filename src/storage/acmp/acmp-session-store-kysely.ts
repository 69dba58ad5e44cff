import { z } from 'zod';
import {
  dueAt,
  sessionBody,
  SessionBodySchema,
  SessionPhaseSchema,
  type NegotiationSession,
} from '../../acmp/negotiation/session.js';
import type { CreateOutcome, SessionListQuery, SessionStore } from '../../acmp/negotiation/session-store.js';
import type { TaskScope } from '../../acmp/provider/task-store.js';
import { LocalError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { Metrics } from '../../shared/metrics.js';
import type { Database, SqlDialect } from '../sql/database.js';
import { RowSignals } from '../sql/row-signals.js';
import {
  column,
  count,
  ignoredRow,
  IntColumn as Int,
  sqlQuery,
  SqlRunner,
  text,
  type Query,
  type SqlKysely,
} from '../sql/query.js';
import type { SqlMigration } from '../sql/migrations.js';

/** Negotiation sessions (session mode) — part of the `acmp` migration set. */
export const sessionsMigration: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('acmp_sessions')
      .addColumn('session_id', 'text', (c) => c.primaryKey())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('agent', 'text', (c) => c.notNull())
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('open_message_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('phase', 'text', (c) => c.notNull())
      .addColumn('due_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('acmp_sessions_opened')
      .unique()
      .on('acmp_sessions')
      .columns(['tenant', 'agent', 'open_message_id'])
      .execute();
    await db.schema.createIndex('acmp_sessions_due').on('acmp_sessions').columns(['due_at']).execute();
    await db.schema
      .createIndex('acmp_sessions_scope')
      .on('acmp_sessions')
      .columns(['tenant', 'agent', 'updated_at', 'session_id'])
      .execute();
  },
};

/** The PostgreSQL channel session changes are signalled on (payload: the session id). */
const SESSION_SIGNAL_CHANNEL = 'acmp_session_signals';

const SessionRow = z.object({
  session_id: z.string(),
  tenant: z.string(),
  agent: z.string(),
  context_id: z.string(),
  open_message_id: z.string(),
  version: Int,
  phase: SessionPhaseSchema,
  created_at: Int,
  updated_at: Int,
  body: z.string(),
});

const COLUMNS =
  'session_id, tenant, agent, context_id, open_message_id, version, phase, due_at, created_at, updated_at, body';

const BY_ID = sqlQuery(`SELECT ${COLUMNS} FROM acmp_sessions WHERE session_id = $1`, decode);
const BY_OPEN_MESSAGE = sqlQuery(
  `SELECT ${COLUMNS} FROM acmp_sessions WHERE tenant = $1 AND agent = $2 AND open_message_id = $3`,
  decode,
);
const UPDATE = `UPDATE acmp_sessions SET version = $1, phase = $2, due_at = $3, updated_at = $4, body = $5
      WHERE session_id = $6 AND version = $7 RETURNING session_id`;
/** The compare-and-set: the id of the session it moved. */
const MOVE = sqlQuery(UPDATE, column('session_id', text));
/** The compare-and-set with its signal (PostgreSQL): a row per session moved, counted, not read. */
const MOVE_AND_SIGNAL = sqlQuery(
  `WITH moved AS (${UPDATE}) SELECT pg_notify('${SESSION_SIGNAL_CHANNEL}', session_id) FROM moved`,
  ignoredRow,
);
/** The cap's own count (open sessions have a due time, terminal ones none), on the due_at index. */
const COUNT_OPEN = sqlQuery(
  `SELECT COUNT(*) AS open FROM acmp_sessions WHERE due_at >= $1`,
  column('open', count),
);
const CALLER_LOCK = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`;

/**
 * {@link SessionStore} on SQLite or PostgreSQL. Create is one conditional `INSERT … SELECT … WHERE <open
 * sessions of the caller, in every tenant> < cap ON CONFLICT DO NOTHING` (on PostgreSQL under a lock on the caller); every
 * change one `UPDATE … WHERE version = $v` (compare-and-set), which on PostgreSQL also issues the NOTIFY
 * that tells every host's watchers.
 */
export class KyselySessionStore implements SessionStore {
  private readonly db: SqlKysely;
  private readonly dialect: SqlDialect;
  private readonly sql: SqlRunner;
  private readonly signals: RowSignals;

  constructor(
    database: Pick<Database, 'db' | 'dialect' | 'url' | 'listens'>,
    options: { logger?: Logger; metrics?: Metrics } = {},
  ) {
    this.db = database.db;
    this.dialect = database.dialect;
    this.sql = new SqlRunner(database.dialect);
    this.signals = new RowSignals(database, { channel: SESSION_SIGNAL_CHANNEL, ...options });
  }

  /** Opens the notification connection (PostgreSQL); call before serving. */
  async open(): Promise<void> {
    await this.signals.open();
  }

  async close(): Promise<void> {
    await this.signals.close();
  }

  async create(session: NegotiationSession, cap: number, now: number): Promise<CreateOutcome> {
    const values = [
      session.id,
      session.scope.tenant,
      session.scope.agent,
      session.contextId,
      session.openMessageId,
      session.version,
      session.phase,
      dueAt(session),
      session.createdAt,
      session.updatedAt,
      JSON.stringify(sessionBody(session)),
    ];
    const types = [
      'TEXT',
      'TEXT',
      'TEXT',
      'TEXT',
      'TEXT',
      'INTEGER',
      'TEXT',
      'BIGINT',
      'BIGINT',
      'BIGINT',
      'TEXT',
    ];
    const select = types.map((type, i) => `CAST($${i + 1} AS ${type})`).join(', ');
    const inserted = await this.callerSerial(session.scope, (db) =>
      this.sql.exec(
        db,
        `INSERT INTO acmp_sessions (${COLUMNS}) SELECT ${select}
       WHERE (SELECT COUNT(*) FROM acmp_sessions WHERE agent = $12 AND due_at >= $13) < $14 ON CONFLICT DO NOTHING`,
        [...values, session.scope.agent, now, cap],
      ),
    );
    if (inserted === 1) return { kind: 'created' };
    const existing = await this.byOpenMessage(session.scope, session.openMessageId);
    return existing ? { kind: 'exists', existing } : { kind: 'cap_reached' };
  }

  async get(id: string): Promise<NegotiationSession | undefined> {
    return this.sql.first(this.db, BY_ID, [id]);
  }

  async byOpenMessage(scope: TaskScope, messageId: string): Promise<NegotiationSession | undefined> {
    return this.sql.first(this.db, BY_OPEN_MESSAGE, [scope.tenant, scope.agent, messageId]);
  }

  async update(next: NegotiationSession): Promise<boolean> {
    const params = [
      next.version,
      next.phase,
      dueAt(next),
      next.updatedAt,
      JSON.stringify(sessionBody(next)),
      next.id,
      next.version - 1,
    ];
    if (this.dialect === 'postgres') {
      // One statement: the change and its signal commit together (NOTIFY is delivered on commit).
      return (await this.sql.rows(this.db, MOVE_AND_SIGNAL, params)).length === 1;
    }
    const moved = (await this.sql.rows(this.db, MOVE, params)).length === 1;
    if (moved) this.signal(next.id);
    return moved;
  }

  async due(now: number, limit: number, scope?: TaskScope): Promise<NegotiationSession[]> {
    const params: unknown[] = [now];
    const next = (value: unknown): string => `$${params.push(value)}`;
    const mine = scope ? ` AND tenant = ${next(scope.tenant)} AND agent = ${next(scope.agent)}` : '';
    const due = sqlQuery(
      `SELECT ${COLUMNS} FROM acmp_sessions WHERE due_at IS NOT NULL AND due_at < $1${mine} ORDER BY due_at LIMIT ${next(limit)}`,
      decode,
    );
    return this.sql.rows(this.db, due, params);
  }

  async countOpen(now: number): Promise<number> {
    return (await this.sql.first(this.db, COUNT_OPEN, [now])) ?? 0;
  }

  async list(
    scope: TaskScope,
    query: SessionListQuery,
  ): Promise<{ sessions: NegotiationSession[]; total: number }> {
    const params: unknown[] = [scope.tenant, scope.agent];
    const next = (value: unknown): string => `$${params.push(value)}`;
    const where = ['tenant = $1', 'agent = $2'];
    if (query.contextId !== undefined) where.push(`context_id = ${next(query.contextId)}`);
    if (query.updatedAfter !== undefined) where.push(`updated_at > ${next(query.updatedAfter)}`);
    if (query.phases !== undefined)
      where.push(
        query.phases.length === 0 ? '1 = 0' : `phase IN (${query.phases.map((p) => next(p)).join(', ')})`,
      );
    const counted = await this.sql.first(this.db, countOf(where), params);
    const after = query.after;
    if (after)
      where.push(
        `(updated_at < ${next(after.updatedAt)} OR (updated_at = ${next(after.updatedAt)} AND session_id < ${next(after.taskId)}))`,
      );
    const page = sqlQuery(
      `SELECT ${COLUMNS} FROM acmp_sessions WHERE ${where.join(' AND ')} ORDER BY updated_at DESC, session_id DESC LIMIT ${next(query.limit)}`,
      decode,
    );
    return { sessions: await this.sql.rows(this.db, page, params), total: counted ?? 0 };
  }

  watch(id: string, listener: () => void): () => void {
    return this.signals.watch(id, listener);
  }

  private signal(id: string): void {
    this.signals.signal(id);
  }

  /**
   * Runs `work` serialised with every other session opening of the caller, on every host. A statement that
   * counts and inserts does not hold a cap under PostgreSQL's READ COMMITTED (two openings both count
   * before either commits); a transaction-scoped advisory lock on the caller makes the second wait and
   * count again. SQLite serialises writes already.
   */
  private callerSerial<T>(scope: TaskScope, work: (db: SqlKysely) => Promise<T>): Promise<T> {
    if (this.dialect !== 'postgres') return work(this.db);
    return this.db.transaction().execute(async (trx) => {
      await this.sql.exec(trx, CALLER_LOCK, [callerKey(scope)]);
      return work(trx);
    });
  }
}

/** The count of the sessions `where` selects. */
function countOf(where: readonly string[]): Query<number> {
  return sqlQuery(
    `SELECT COUNT(*) AS total FROM acmp_sessions WHERE ${where.join(' AND ')}`,
    column('total', count),
  );
}

function decode(row: unknown): NegotiationSession {
  const parsed = SessionRow.safeParse(row);
  let body: unknown;
  try {
    body = parsed.success ? JSON.parse(parsed.data.body) : undefined;
  } catch {
    body = undefined;
  }
  const decoded = SessionBodySchema.safeParse(body);
  if (!parsed.success || !decoded.success)
    throw new LocalError('INVALID_STATE', 'acmp_sessions row is malformed');
  const r = parsed.data;
  return {
    ...decoded.data,
    id: r.session_id,
    contextId: r.context_id,
    scope: { tenant: r.tenant, agent: r.agent },
    openMessageId: r.open_message_id,
    version: r.version,
    phase: r.phase,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * The advisory-lock key text of a caller's session openings (the namespace keeps it apart from others):
 * the caller's identity alone, as the cap counts its sessions in every tenant (docs/acmp-negotiation.md).
 */
function callerKey(scope: TaskScope): string {
  return JSON.stringify(['acmp_sessions.open', scope.agent]);
}

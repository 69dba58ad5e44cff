import { sql } from 'kysely';
import type { Database } from '../../storage/sql/database.js';
import { num, optNum, parseStored, str } from './tables.js';

/** How a task shows on the console: running, or how it finished. */
export type ConsoleTaskState = 'running' | 'completed' | 'canceled' | 'failed';

/** One row of the task list (docs/console.md "GET /console/api/tasks"). */
export interface ConsoleTaskRow {
  readonly taskId: string;
  readonly tenant: string;
  readonly caller: string;
  readonly capability: string | undefined;
  readonly state: ConsoleTaskState;
  readonly hostId: string;
  readonly createdAt: number;
  readonly finishedAt: number | undefined;
  readonly deadlineAt: number;
  readonly chunkCount: number;
  readonly costCu: number | undefined;
  readonly errorCode: number | undefined;
}

/** The filters of the task list. */
export interface TaskFilter {
  readonly state?: ConsoleTaskState | undefined;
  readonly capability?: string | undefined;
  readonly caller?: string | undefined;
  readonly limit: number;
}

const TASK_COLUMNS = [
  'task_id',
  'tenant',
  'agent',
  'state',
  'end_state',
  'host_id',
  'created_at',
  'finished_at',
  'deadline_at',
  'chunk_count',
  'outcome',
  'request',
] as const;

/** The capability an invoke names, wherever the binding's encoding put `params.capability`. */
function capabilityOf(request: unknown, depth = 0): string | undefined {
  if (depth > 8 || typeof request !== 'object' || request === null) return undefined;
  const record = request as Record<string, unknown>;
  if (typeof record.capability === 'string') return record.capability;
  for (const value of Array.isArray(request) ? request : Object.values(record)) {
    const found = capabilityOf(value, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A stored task row as the console shows it. */
function decodeTaskRow(row: Record<string, unknown>): ConsoleTaskRow {
  const outcome = parseStored(row.outcome) as
    { kind?: string; result?: { cost_cu?: unknown }; error?: { code?: unknown } } | undefined;
  const failed = outcome?.kind === 'error';
  const state: ConsoleTaskState =
    row.state === 'running'
      ? 'running'
      : failed
        ? 'failed'
        : row.end_state === 'canceled'
          ? 'canceled'
          : 'completed';
  const cost = outcome?.result?.cost_cu;
  const code = outcome?.error?.code;
  return {
    taskId: str(row.task_id),
    tenant: str(row.tenant),
    caller: str(row.agent),
    capability: capabilityOf(parseStored(row.request)),
    state,
    hostId: str(row.host_id),
    createdAt: num(row.created_at),
    finishedAt: optNum(row.finished_at),
    deadlineAt: num(row.deadline_at),
    chunkCount: num(row.chunk_count),
    costCu: typeof cost === 'number' ? cost : undefined,
    errorCode: typeof code === 'number' ? code : undefined,
  };
}

/**
 * The newest tasks of every caller (operator view: all scopes), filtered. State and caller filter in SQL;
 * the capability (inside the binding's stored request) is matched on the text first, then exactly.
 */
export async function listTasks(
  database: Database,
  filter: TaskFilter,
): Promise<{ tasks: ConsoleTaskRow[]; total: number }> {
  let query = database.db.selectFrom('acmp_tasks');
  if (filter.state === 'running') query = query.where('state', '=', 'running');
  else if (filter.state === 'canceled') query = query.where('end_state', '=', 'canceled');
  else if (filter.state !== undefined)
    query = query
      .where('state', '=', 'finished')
      .where('end_state', '=', 'completed')
      .where('outcome', filter.state === 'failed' ? 'like' : 'not like', '%"kind":"error"%');
  if (filter.caller) query = query.where('agent', '=', filter.caller);
  if (filter.capability) query = query.where('request', 'like', `%${likeEscaped(filter.capability)}%`);
  const counted = (await query.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst()) as
    { n: unknown } | undefined;
  const rows = (await query
    .select([...TASK_COLUMNS])
    .orderBy('updated_at', 'desc')
    .orderBy('task_id', 'desc')
    .limit(filter.limit)
    .execute()) as Record<string, unknown>[];
  const tasks = rows
    .map(decodeTaskRow)
    .filter((t) => filter.capability === undefined || t.capability === filter.capability);
  return { tasks, total: filter.capability ? tasks.length : num(counted?.n) };
}

/** `%` and `_` matched literally by LIKE (no ESCAPE clause needed: both are dropped to `_`-free text). */
function likeEscaped(text: string): string {
  return text.replace(/[%_\\]/g, '');
}

/** One task with its stored request, chunks and outcome (the task page). */
export async function readTask(
  database: Database,
  taskId: string,
): Promise<{ row: ConsoleTaskRow; request: unknown; chunks: unknown[]; outcome: unknown } | undefined> {
  const row = (await database.db
    .selectFrom('acmp_tasks')
    .select([...TASK_COLUMNS])
    .where('task_id', '=', taskId)
    .executeTakeFirst()) as Record<string, unknown> | undefined;
  if (!row) return undefined;
  const chunks = (await database.db
    .selectFrom('acmp_task_chunks')
    .select(['chunk'])
    .where('task_id', '=', taskId)
    .orderBy('seq')
    .limit(1000)
    .execute()) as { chunk: unknown }[];
  return {
    row: decodeTaskRow(row),
    request: parseStored(row.request),
    chunks: chunks.map((c) => parseStored(c.chunk)),
    outcome: parseStored(row.outcome),
  };
}

/** Per-minute activity of the last hour: invokes started, errors, CU billed; errors by code. */
export interface TaskActivity {
  readonly minutes: number[];
  readonly invokes: number[];
  readonly errors: number[];
  readonly cu: number[];
  readonly errorsByCode: Record<string, number>;
  readonly running: number;
  /** Invokes started in the 60 s before now. */
  readonly lastMinute: number;
}

const MINUTE_MS = 60_000;
const HOUR_MINUTES = 60;

/** The activity of every host on the database over the hour before `now`, aggregated in SQL. */
export async function taskActivity(database: Database, now: number): Promise<TaskActivity> {
  const since = now - HOUR_MINUTES * MINUTE_MS;
  const json = jsonFields(database.dialect);
  const { rows } = await sql<{ bucket: unknown; n: unknown; errors: unknown; cu: unknown }>`
    SELECT created_at / ${sql.lit(MINUTE_MS)} AS bucket, COUNT(*) AS n,
      SUM(CASE WHEN ${json.kind} = 'error' THEN 1 ELSE 0 END) AS errors,
      SUM(CASE WHEN ${json.kind} = 'result' THEN ${json.cost} ELSE 0 END) AS cu
    FROM acmp_tasks WHERE created_at >= ${since} GROUP BY created_at / ${sql.lit(MINUTE_MS)}`.execute(
    database.db,
  );
  const codes = await sql<{ code: unknown; n: unknown }>`
    SELECT ${json.code} AS code, COUNT(*) AS n FROM acmp_tasks
    WHERE created_at >= ${since} AND ${json.kind} = 'error' GROUP BY ${json.code}`.execute(database.db);
  const running = await sql<{ n: unknown }>`
    SELECT COUNT(*) AS n FROM acmp_tasks WHERE state = 'running'`.execute(database.db);
  const lastMinute = await sql<{ n: unknown }>`
    SELECT COUNT(*) AS n FROM acmp_tasks WHERE created_at >= ${now - MINUTE_MS}`.execute(database.db);
  const first = Math.floor(now / MINUTE_MS) - HOUR_MINUTES + 1;
  const minutes = Array.from({ length: HOUR_MINUTES }, (_, i) => (first + i) * MINUTE_MS);
  const at = new Map(rows.map((r) => [num(r.bucket), r]));
  const series = (pick: (r: (typeof rows)[number]) => unknown): number[] =>
    minutes.map((m) => {
      const r = at.get(m / MINUTE_MS);
      return r ? num(pick(r)) : 0;
    });
  return {
    minutes,
    invokes: series((r) => r.n),
    errors: series((r) => r.errors),
    cu: series((r) => r.cu),
    errorsByCode: Object.fromEntries(codes.rows.map((r) => [String(r.code), num(r.n)])),
    running: num(running.rows[0]?.n),
    lastMinute: num(lastMinute.rows[0]?.n),
  };
}

/** The outcome's kind, cost and error code as SQL expressions of the dialect. */
function jsonFields(dialect: Database['dialect']) {
  return dialect === 'sqlite'
    ? {
        kind: sql`json_extract(outcome, '$.kind')`,
        cost: sql`json_extract(outcome, '$.result.cost_cu')`,
        code: sql`json_extract(outcome, '$.error.code')`,
      }
    : {
        kind: sql`(outcome::json ->> 'kind')`,
        cost: sql`(outcome::json -> 'result' ->> 'cost_cu')::double precision`,
        code: sql`(outcome::json -> 'error' ->> 'code')`,
      };
}

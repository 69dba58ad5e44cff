import { z } from 'zod';
import { PayloadSchema, type Payload } from '../../acmp/wire/task-messages.js';
import {
  TaskOutcomeSchema,
  type AcmpTaskRecord,
  type TaskOutcome,
  type TaskSignal,
} from '../../acmp/provider/task-store.js';
import { LocalError } from '../../shared/errors.js';
import { IntColumn as Int } from '../sql/query.js';

/** The columns of a task record, in the order {@link decodeTaskRow} reads them. */
export const TASK_COLUMNS =
  'task_id, tenant, agent, params_hash, context_id, request, host_id, state, created_at, deadline_at, updated_at, chunk_count, outcome, end_state, finished_at';

const TaskRowSchema = z.object({
  task_id: z.string(),
  tenant: z.string(),
  agent: z.string(),
  params_hash: z.string(),
  context_id: z.string(),
  request: z.string(),
  host_id: z.string(),
  state: z.enum(['running', 'finished']),
  created_at: Int,
  deadline_at: Int,
  updated_at: Int,
  chunk_count: Int,
  outcome: z.string().nullable(),
  end_state: z.enum(['completed', 'canceled']).nullable(),
  finished_at: Int.nullable(),
});

/**
 * Decodes a row of `acmp_tasks` (STYLE.md "Boundaries": rows are checked at the edge, not cast).
 * @throws LocalError `INVALID_STATE` for a row that is not a well-formed record.
 */
export function decodeTaskRow(row: unknown, written?: TaskOutcome): AcmpTaskRecord {
  const parsed = TaskRowSchema.safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'acmp_tasks row is malformed');
  const r = parsed.data;
  const base = {
    taskId: r.task_id,
    scope: { tenant: r.tenant, agent: r.agent },
    paramsHash: r.params_hash,
    contextId: r.context_id,
    request: r.request,
    hostId: r.host_id,
    createdAt: r.created_at,
    deadlineAt: r.deadline_at,
    updatedAt: r.updated_at,
    chunkCount: r.chunk_count,
  };
  if (r.state === 'running') return { ...base, state: 'running' };
  // The outcome this process just wrote (RETURNING of its own compare-and-set) needs no parsing back.
  const outcome =
    written !== undefined
      ? { success: true as const, data: written }
      : TaskOutcomeSchema.safeParse(parseJson(r.outcome));
  if (!outcome.success || r.end_state === null || r.finished_at === null) {
    throw new LocalError('INVALID_STATE', 'acmp_tasks row is finished without a well-formed outcome');
  }
  return { ...base, state: 'finished', outcome: outcome.data, end: r.end_state, finishedAt: r.finished_at };
}

/** Decodes a row of `acmp_task_chunks`. */
export function decodeChunk(row: unknown): Payload {
  const parsed = z.object({ chunk: z.string() }).safeParse(row);
  const chunk = parsed.success ? PayloadSchema.safeParse(parseJson(parsed.data.chunk)) : undefined;
  if (!chunk?.success) throw new LocalError('INVALID_STATE', 'acmp_task_chunks row is malformed');
  return chunk.data;
}

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** NOTIFY payloads stay far below PostgreSQL's 8000-byte limit: a heartbeat's detail is cut to this. */
const MAX_DETAIL = 1_000;

const SignalSchema = z.discriminatedUnion('k', [
  z.object({ k: z.literal('c'), t: z.string(), n: z.number() }),
  z.object({ k: z.literal('h'), t: z.string(), p: z.number().optional(), d: z.string().optional() }),
  z.object({ k: z.literal('f'), t: z.string() }),
]);

/** The NOTIFY payload of a signal. */
export function encodeSignal(signal: TaskSignal): string {
  switch (signal.kind) {
    case 'chunks':
      return JSON.stringify({ k: 'c', t: signal.taskId, n: signal.count });
    case 'heartbeat':
      return JSON.stringify({
        k: 'h',
        t: signal.taskId,
        p: signal.progress,
        d: signal.detail?.slice(0, MAX_DETAIL),
      });
    case 'finished':
    case 'resync':
      return JSON.stringify({ k: 'f', t: signal.taskId });
  }
}

/** The signal of a NOTIFY payload; `undefined` for one this version does not know. */
export function decodeSignal(payload: string): TaskSignal | undefined {
  const parsed = SignalSchema.safeParse(parseJson(payload));
  if (!parsed.success) return undefined;
  const s = parsed.data;
  switch (s.k) {
    case 'c':
      return { kind: 'chunks', taskId: s.t, count: s.n };
    case 'h':
      return {
        kind: 'heartbeat',
        taskId: s.t,
        ...(s.p !== undefined ? { progress: s.p } : {}),
        ...(s.d !== undefined ? { detail: s.d } : {}),
      };
    case 'f':
      return { kind: 'finished', taskId: s.t };
  }
}

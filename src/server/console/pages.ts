import type express from 'express';
import type { ConsoleSources } from './console-routes.js';
import { listTransactions, readTransaction, type TransactionDetail } from './acp-reads.js';
import { maskPayloads, maskState } from './masking.js';
import { ConsoleInputError, limitOf, param } from './params.js';
import { listTasks, readTask, type ConsoleTaskState } from './task-reads.js';

const TASK_STATES: readonly ConsoleTaskState[] = ['running', 'completed', 'canceled', 'failed'];

/** `GET /console/api/tasks?state=&capability=&caller=&limit=`. @throws ConsoleInputError for an unknown state. */
export async function readTaskPage(sources: ConsoleSources, req: express.Request): Promise<unknown> {
  if (!(await sources.tables.has('acmp_tasks', sources.clock.now())))
    return { absent: true, tasks: [], total: 0 };
  const state = param(req, 'state');
  if (state !== undefined && !TASK_STATES.includes(state as ConsoleTaskState))
    throw new ConsoleInputError(`state must be one of ${TASK_STATES.join(', ')}`);
  return listTasks(sources.database, {
    state: state as ConsoleTaskState | undefined,
    capability: param(req, 'capability'),
    caller: param(req, 'caller'),
    limit: limitOf(req),
  });
}

/**
 * `GET /console/api/tasks/:id`: the record, its request, chunks, outcome and proof, and a history made of
 * the record's times. Payload contents are masked unless revealed.
 */
export async function readTaskDetail(
  sources: ConsoleSources,
  query: { id: string; reveal: boolean },
): Promise<unknown> {
  if (!(await sources.tables.has('acmp_tasks', sources.clock.now()))) return undefined;
  const task = await readTask(sources.database, query.id);
  if (!task) return undefined;
  const shown = (value: unknown): unknown => (query.reveal ? value : maskPayloads(value));
  const outcome = task.outcome as { result?: { proof?: unknown } } | undefined;
  const { row } = task;
  const history = [
    { at: row.createdAt, what: `claimed by host ${row.hostId}` },
    ...(row.chunkCount > 0
      ? [{ at: row.finishedAt ?? row.createdAt, what: `${row.chunkCount} chunks stored` }]
      : []),
    ...(row.finishedAt === undefined
      ? [{ at: row.deadlineAt, what: 'deadline' }]
      : [{ at: row.finishedAt, what: row.state === 'failed' ? `failed (${row.errorCode})` : row.state }]),
  ];
  return {
    task: row,
    history,
    request: shown(task.request),
    chunks: task.chunks.map(shown),
    outcome: shown(task.outcome),
    proof: outcome?.result?.proof ?? null,
    masked: !query.reveal,
  };
}

/** `GET /console/api/acp/transactions`. */
export async function readAcpPage(sources: ConsoleSources, limit: number): Promise<unknown> {
  if (!(await sources.tables.has('acp_transactions', sources.clock.now())))
    return { absent: true, transactions: [], total: 0 };
  return listTransactions(sources.database, limit);
}

/** `GET /console/api/acp/transactions/:id`: personal data masked unless revealed. */
export async function readAcpTransaction(
  sources: ConsoleSources,
  query: { id: string; reveal: boolean },
): Promise<(TransactionDetail & { masked: boolean }) | undefined> {
  if (!(await sources.tables.has('acp_transactions', sources.clock.now()))) return undefined;
  const detail = await readTransaction(sources.database, sources.transactions, query.id);
  if (!detail) return undefined;
  if (query.reveal) return { ...detail, masked: false };
  const snapshot = maskState(detail.snapshot);
  return { ...detail, snapshot, events: snapshot.events, masked: true };
}

import { Message, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { ACMP_METHOD } from '../../acmp/wire/constants.js';
import { encodeErrorRoot, encodeRequestRoot, encodeResultRoot } from '../../acmp/wire/messages.js';
import { type InvokeParams } from '../../acmp/wire/task-messages.js';
import { decodeInvokeRequest } from '../../acmp/provider/stored-request.js';
import type { TaskEvent } from '../../acmp/provider/provider.js';
import type {
  AcmpTaskRecord,
  FinishedTaskRecord,
  TaskListQuery,
  TaskOutcome,
  TaskScope,
} from '../../acmp/provider/task-store.js';
import { isoTimeAt } from '../../shared/clock.js';
import { callerIdentity } from '../caller.js';
import type { TaskViewPage } from '../task-views.js';
import { encodeUserMessage } from '../part-codec.js';
import { acmpAgentMessage, acmpPart, acmpRootOf, decodeRequest } from '../acmp-part.js';

/** The caller scope of a call: the tenant and the caller's identity (the SDK stores' owner rule). */
export function scopeOf(context: ServerCallContext): TaskScope {
  return { tenant: context.tenant ?? '', agent: callerIdentity(context) };
}

/**
 * The invoke message of a record, history[0] of its task view (docs/acmp-a2a-binding.md §5): the A2A
 * message it arrived in, or — for an invoke another binding received (docs/acmp-mcp-binding.md §5) — a
 * user message carrying the same `acmp/invoke` root, its id derived from the task so every read agrees.
 */
function invokeMessageOf(record: AcmpTaskRecord): Message | undefined {
  const params = decodeInvokeRequest(record.request);
  if (!params) return decodeRequest(record.request);
  return encodeUserMessage({
    messageId: `msg-${record.taskId}-invoke`,
    taskId: record.taskId,
    contextId: record.contextId,
    parts: [acmpPart(encodeRequestRoot(ACMP_METHOD.invoke, params))],
  });
}

/** The agent message carrying a task's stored outcome; its id is derived from the task, so every read agrees. */
export function outcomeMessage(record: AcmpTaskRecord, outcome: TaskOutcome): Message {
  const root = outcome.kind === 'result' ? encodeResultRoot(outcome.result) : encodeErrorRoot(outcome.error);
  return acmpAgentMessage(root, {
    messageId: `msg-${record.taskId}-outcome`,
    taskId: record.taskId,
    contextId: record.contextId,
  });
}

/** The A2A state of a record: `working` while it runs, then `completed` or `canceled` (binding §3.4). */
export function stateOf(record: AcmpTaskRecord): TaskState {
  if (record.state === 'running') return TaskState.TASK_STATE_WORKING;
  return record.end === 'canceled' ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_COMPLETED;
}

/**
 * The A2A Task of an ACMP invoke, derived from its one record (docs/acmp-a2a-binding.md §5): history is
 * the invoke and, once finished, the outcome message, which is also the final `status.message`. No
 * artifacts: the output travels inside `acmp_result`.
 */
export function taskView(
  record: AcmpTaskRecord,
  known?: { readonly request: string; readonly message: Message },
): Task {
  // The invoke this process just encoded for the record needs no decoding back.
  const invoke =
    known !== undefined && known.request === record.request ? known.message : invokeMessageOf(record);
  const history = invoke ? [invoke] : [];
  let message: Message | undefined;
  if (record.state === 'finished' && record.outcome) {
    message = outcomeMessage(record, record.outcome);
    history.push(message);
  }
  return {
    id: record.taskId,
    contextId: record.contextId,
    status: { state: stateOf(record), message, timestamp: new Date(record.updatedAt).toISOString() },
    artifacts: [],
    history,
    metadata: undefined,
  };
}

/** The record as it stands once the terminal event of its invoke arrived. */
export function finishedView(
  record: AcmpTaskRecord,
  event: Extract<TaskEvent, { kind: 'result' | 'error' }>,
): FinishedTaskRecord {
  const outcome: TaskOutcome =
    event.kind === 'result'
      ? { kind: 'result' as const, result: event.result }
      : { kind: 'error' as const, error: event.error };
  return { ...record, state: 'finished', outcome, end: event.end, finishedAt: event.at, updatedAt: event.at };
}

/** A status update of the record's task: its new `state`, the ACMP `message` it carries, and when (`at`). */
export function statusUpdate(
  record: AcmpTaskRecord,
  update: { readonly state: TaskState; readonly message: Message; readonly at: number },
): StreamResponse {
  const { state, message, at } = update;
  return {
    payload: {
      $case: 'statusUpdate',
      value: {
        taskId: record.taskId,
        contextId: record.contextId,
        status: { state, message, timestamp: isoTimeAt(at) },
        metadata: undefined,
      },
    },
  };
}

/** The invoke params of a record's stored request (to follow it as it was asked: streamed or not). */
export function invokeParamsOf(record: AcmpTaskRecord): InvokeParams | undefined {
  const root = acmpRootOf(invokeMessageOf(record));
  return root?.kind === 'request' && root.method === ACMP_METHOD.invoke ? root.params : undefined;
}

/** ListTasks filters in record terms; `undefined` when no ACMP task can match (e.g. status `failed`). */
export function listQuery({ params, after, limit }: TaskViewPage): TaskListQuery | undefined {
  const states: Partial<Record<TaskState, TaskListQuery['state']>> = {
    [TaskState.TASK_STATE_WORKING]: 'running',
    [TaskState.TASK_STATE_COMPLETED]: 'completed',
    [TaskState.TASK_STATE_CANCELED]: 'canceled',
  };
  const filtered = params.status !== undefined && params.status !== TaskState.TASK_STATE_UNSPECIFIED;
  const state = filtered ? states[params.status] : undefined;
  if (filtered && state === undefined) return undefined;
  const updatedAfter = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
  return {
    limit,
    ...(params.contextId ? { contextId: params.contextId } : {}),
    ...(state ? { state } : {}),
    ...(updatedAfter !== undefined && !Number.isNaN(updatedAfter) ? { updatedAfter } : {}),
    ...(after ? { after } : {}),
  };
}

import { Message, TaskState, type Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { encodeErrorRoot, encodeResultRoot } from '../../acmp/messages.js';
import type { AcmpTaskRecord, TaskOutcome, TaskScope } from '../../acmp/task-store.js';
import { callerIdentity } from '../caller.js';
import { acmpAgentMessage } from './codec.js';

/** The caller scope of a call: the tenant and the caller's identity (the SDK stores' owner rule). */
export function scopeOf(context: ServerCallContext): TaskScope {
  return { tenant: context.tenant ?? '', agent: callerIdentity(context) };
}

/** The stored form of the invoke message: its ProtoJSON text. */
export function encodeRequest(message: Message): string {
  return JSON.stringify(Message.toJSON(message));
}

/** The invoke message of a record; `undefined` when none is stored or it cannot be read. */
export function decodeRequest(text: string): Message | undefined {
  if (text === '') return undefined;
  try {
    return Message.fromJSON(JSON.parse(text));
  } catch {
    return undefined;
  }
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
    known !== undefined && known.request === record.request ? known.message : decodeRequest(record.request);
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

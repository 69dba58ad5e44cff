import { TaskState, type Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { ACMP_CODE } from '../../acmp/errors.js';
import { encodeErrorRoot } from '../../acmp/messages.js';
import type { AcmpProvider } from '../../acmp/provider.js';
import { sleep } from '../../shared/async.js';
import type { Clock } from '../../shared/clock.js';
import { LocalError } from '../../shared/errors.js';
import type { IdSource } from '../../shared/ids.js';
import { TERMINAL_STATES } from '../part-codec.js';
import { acmpAgentMessage } from './codec.js';

const CANCEL_WAIT_MS = 5_000;
const CANCEL_POLL_MS = 50;

/** What {@link recordRemoteCancel} reads and writes. */
export interface RemoteCancelDeps {
  provider: AcmpProvider;
  taskStore: TaskStore;
  ids: IdSource;
  clock: Clock;
}

/**
 * CancelTask for a task another process runs (several hosts on one database): the store decides. Waits
 * until the owner stores the outcome, then records the A2A-required `canceled` state with the outcome's
 * payload. If the owner does not answer within the wait, the task is returned as it stands.
 */
export async function recordRemoteCancel(deps: RemoteCancelDeps, taskId: string, context: ServerCallContext): Promise<Task> {
  const deadline = AbortSignal.timeout(CANCEL_WAIT_MS);
  for (;;) {
    const outcome = await deps.provider.outcome(taskId);
    const task = await deps.taskStore.load(taskId, context);
    if (!task) throw new LocalError('NOT_FOUND', 'the task disappeared while it was being cancelled');
    if (outcome?.kind === 'error' && outcome.error.code === ACMP_CODE.cancelled) {
      // The work was cancelled: A2A requires `canceled`, also over the owner's `completed` record of the
      // same -33004 outcome (the owner's host did not see the A2A cancel).
      if (task.status?.state === TaskState.TASK_STATE_CANCELED) return task;
      const recorded = task.status && TERMINAL_STATES.has(task.status.state) ? task.status.message : undefined;
      const message = recorded ?? acmpAgentMessage(encodeErrorRoot(outcome.error), deps.ids.newId('msg'), task.id, task.contextId);
      const timestamp = new Date(deps.clock.now()).toISOString();
      const history = recorded ? task.history : [...task.history, message];
      const final: Task = { ...task, status: { state: TaskState.TASK_STATE_CANCELED, message, timestamp }, history };
      await deps.taskStore.save(final, context);
      return final;
    }
    // Work that finished before the cancel took effect keeps its terminal state and result.
    if ((task.status && TERMINAL_STATES.has(task.status.state)) || deadline.aborted) return task;
    await sleep(CANCEL_POLL_MS);
  }
}

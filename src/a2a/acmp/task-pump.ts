import { TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { AcmpProvider, ProviderEvent } from '../../acmp/provider.js';
import { encodeEventRoot, type InvokeParams } from '../../acmp/messages.js';
import { ACMP_CODE } from '../../acmp/errors.js';
import { AsyncQueue } from '../../shared/async.js';
import type { Clock } from '../../shared/clock.js';
import type { IdSource } from '../../shared/ids.js';
import { errorFields, type Logger } from '../../shared/logger.js';
import { TERMINAL_STATES } from '../part-codec.js';
import { acmpAgentMessage, sameAcmpData } from './codec.js';

/** What one pump needs. */
export interface PumpDeps {
  provider: AcmpProvider;
  taskStore: TaskStore;
  ids: IdSource;
  clock: Clock;
  logger: Logger;
  /** Whether the task was cancelled through A2A CancelTask (its final state is then `canceled`). */
  cancelledByA2A(taskId: string): boolean;
}

/** One invoke in progress: the stream a client reads and the promise of the task's final state. */
export interface Pump {
  /** Events for the client that started (or joined) the invoke. */
  readonly events: AsyncIterable<StreamResponse>;
  /** Resolves with the final task once it is saved (never rejects). */
  readonly done: Promise<Task>;
}

function statusUpdate(task: Task, state: TaskState, message: Message, clock: Clock): StreamResponse {
  return {
    payload: {
      $case: 'statusUpdate',
      value: {
        taskId: task.id,
        contextId: task.contextId,
        status: { state, message, timestamp: new Date(clock.now()).toISOString() },
        metadata: undefined,
      },
    },
  };
}


/**
 * Saves the final task. A cancelled invoke first reads the stored task: when an A2A CancelTask served by
 * another host already recorded `canceled`, that state stands (the store decides, not this process).
 */
async function saveFinal(deps: PumpDeps, final: Task, event: ProviderEvent, context: ServerCallContext): Promise<Task> {
  if (event.kind === 'error' && event.error.code === ACMP_CODE.cancelled && final.status?.state !== TaskState.TASK_STATE_CANCELED) {
    const stored = await deps.taskStore.load(final.id, context);
    if (stored?.status?.state === TaskState.TASK_STATE_CANCELED) return stored;
  }
  await deps.taskStore.save(final, context);
  return final;
}

/**
 * Runs one `acmp/invoke` for A2A and keeps the A2A task in step (docs/acmp-a2a-binding.md "Placement"):
 * - the task is saved once when the invoke starts (`working`, history = [invoke]) and once at the end
 *   (`completed`, or `canceled` after an A2A CancelTask; `status.message` = the `acmp_result` or
 *   `acmp_error` message, appended to history). Chunks and heartbeats are delivered as status-update
 *   messages on the stream and never persisted, so a long stream costs two task writes, not one per event.
 * - the pump runs to the end even if the client goes away, so the final state is always saved; the
 *   client's stream only stops delivery.
 */
export function startPump(
  deps: PumpDeps,
  start: {
    task: Task;
    /** Save the task at the start (a new task) — false for a duplicate of a known task. */
    isNew: boolean;
    /** This pump owns the A2A task's state; a joiner of a pump running here only relays events. */
    owner: boolean;
    params: InvokeParams;
    canStream: boolean;
    context: ServerCallContext;
    /** For a joiner: the owner's completion, awaited before the joiner's final event. */
    ownerDone?: Promise<Task>;
  },
): Pump {
  const queue = new AsyncQueue<StreamResponse>();
  const { task, context } = start;
  const liveState = task.status?.state ?? TaskState.TASK_STATE_WORKING;
  const done = (async (): Promise<Task> => {
    const detach = new AbortController();
    let drained = false;
    let final: Task = task;
    try {
      if (start.isNew) await deps.taskStore.save(task, context);
      queue.push({ payload: { $case: 'task', value: task } });
      for await (const event of deps.provider.invoke(start.params, { canStream: start.canStream, signal: detach.signal })) {
        const message = acmpAgentMessage(encodeEventRoot(event), deps.ids.newId('msg'), task.id, task.contextId);
        if (event.kind === 'chunk' || event.kind === 'heartbeat') {
          queue.push(statusUpdate(task, liveState, message, deps.clock));
          continue;
        }
        // A2A binding §3.4: ACMP errors stay in the payload; the task completes. An A2A-native
        // CancelTask is the exception: A2A then requires `canceled` (A2A §3.1.5).
        // Only a cancelled outcome (-33004) becomes `canceled`: work that finished before the cancel took
        // effect completed, and its (billed) result must not be recorded as cancelled.
        const cancelled = event.kind === 'error' && event.error.code === ACMP_CODE.cancelled;
        const state = cancelled && deps.cancelledByA2A(task.id) ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_COMPLETED;
        if (start.ownerDone) final = await start.ownerDone;
        else if (TERMINAL_STATES.has(liveState) && sameAcmpData(task.status?.message, message)) {
          // A replay of a finished task: the stored task stands (a `canceled` task stays canceled, its
          // history does not grow). A re-judged rejection (nothing was stored) is saved below.
          final = task;
        } else {
          final = {
            ...task,
            status: { state, message, timestamp: new Date(deps.clock.now()).toISOString() },
            history: [...task.history, message],
          };
          if (start.owner) final = await saveFinal(deps, final, event, context);
        }
        queue.push(statusUpdate(final, final.status?.state ?? state, message, deps.clock));
      }
      drained = true;
      queue.end();
    } catch (error) {
      deps.logger.error('acmp.a2a.pump_failed', { task_id: task.id, ...errorFields(error) });
      queue.fail(new Error('Internal error'));
    } finally {
      // Detach only when the provider's stream did not end by itself (aborting costs an exception).
      if (!drained) detach.abort();
    }
    return final;
  })();
  return { events: queue, done };
}

import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import type { TaskOutcome } from './task-store.js';

/** The `data.reason` of the answer to a task id whose record was pruned. */
export const PRUNED_TASK_REASON = 'task_pruned';

/**
 * The outcome a task's record keeps once retention pruned its result (docs/operations.md "Retention").
 * Layer 1 §3.1.1: a provider that has seen a `task_id` MUST NOT execute it again. A pruned task therefore
 * keeps its row — task id, caller, params hash, times — as the key of its id, and every later invoke with
 * that id is answered, as a replay, with this error instead of running again: -32602 like the other
 * refusals of a task id (already used with other params, in use by another caller), not retryable with
 * the same id. The buyer received the result when the task ended; what is gone is only the copy a retry
 * would replay.
 */
export const PRUNED_TASK_OUTCOME: TaskOutcome = {
  kind: 'error',
  error: new AcmpError(ACMP_CODE.invalidParams, {
    reason: PRUNED_TASK_REASON,
    detail: 'task_id was used by a task whose result is no longer kept (retention); use a new task_id',
  }).toObject(),
};

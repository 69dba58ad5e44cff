import { Role, TaskState, type ListTasksRequest } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import type { AcmpTaskRecord } from '../../acmp/provider/task-store.js';
import { finishedView, listQuery, outcomeMessage, statusUpdate, taskView } from './task-view.js';

function running(overrides: Partial<AcmpTaskRecord> = {}): AcmpTaskRecord {
  return {
    taskId: 'task-1',
    scope: { tenant: '', agent: 'agent:buyer' },
    paramsHash: 'h',
    contextId: 'ctx-1',
    request: '',
    hostId: 'host-a',
    state: 'running',
    createdAt: 1_000,
    deadlineAt: 61_000,
    updatedAt: 1_000,
    chunkCount: 0,
    ...overrides,
  };
}

function listing(overrides: Partial<ListTasksRequest>): ListTasksRequest {
  return {
    tenant: '',
    contextId: '',
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageToken: '',
    statusTimestampAfter: undefined,
    ...overrides,
  };
}

const error = { code: -33004, message: 'Task cancelled', data: { task_id: 'task-1' } };

describe('finishedView', () => {
  it('finishes the record with the terminal event’s outcome, end and time', () => {
    const final = finishedView(running(), { kind: 'error', error, end: 'canceled', at: 5_000 });
    expect(final).toMatchObject({
      state: 'finished',
      outcome: { kind: 'error', error },
      end: 'canceled',
      finishedAt: 5_000,
      updatedAt: 5_000,
    });
  });

  it('gives an outcome the task’s outcome message is built from', () => {
    const final = finishedView(running(), { kind: 'error', error, end: 'completed', at: 5_000 });
    expect(outcomeMessage(final, final.outcome).messageId).toBe('msg-task-1-outcome');
  });
});

describe('statusUpdate', () => {
  it('carries the state, the message and the time on the record’s task and context', () => {
    const final = finishedView(running(), { kind: 'error', error, end: 'completed', at: 5_000 });
    const message = outcomeMessage(final, final.outcome);
    const update = statusUpdate(final, { state: TaskState.TASK_STATE_COMPLETED, message, at: 5_000 });
    expect(update.payload).toEqual({
      $case: 'statusUpdate',
      value: {
        taskId: 'task-1',
        contextId: 'ctx-1',
        status: { state: TaskState.TASK_STATE_COMPLETED, message, timestamp: new Date(5_000).toISOString() },
        metadata: undefined,
      },
    });
  });
});

describe('listQuery', () => {
  it('maps an A2A state filter to the record state', () => {
    const params = listing({
      status: TaskState.TASK_STATE_CANCELED,
      contextId: 'ctx-1',
    });
    expect(listQuery({ params, after: undefined, limit: 11 })).toEqual({
      limit: 11,
      contextId: 'ctx-1',
      state: 'canceled',
    });
  });

  it('matches nothing for a state no ACMP task takes', () => {
    const params = listing({ status: TaskState.TASK_STATE_FAILED });
    expect(listQuery({ params, after: undefined, limit: 11 })).toBeUndefined();
  });
});

describe('taskView: history[0] is the invoke, whichever binding received it', () => {
  it('has no history entry for a request that is not a message nor a stored ACMP invoke', () => {
    for (const request of ['', '{"method":"acmp/cancel","params":{"task_id":"task-1"}}', '{"parts":[]}'])
      expect(taskView(running({ request })).history).toEqual([]);
  });

  it('reads the A2A message an invoke arrived in as it was stored', () => {
    const message = { messageId: 'msg-a', role: 'ROLE_USER', taskId: 'task-1', parts: [{ text: 'x' }] };
    expect(taskView(running({ request: JSON.stringify(message) })).history[0]).toMatchObject({
      messageId: 'msg-a',
      role: Role.ROLE_USER,
    });
  });
});

/**
 * Limits on the ids A2A requests carry, the same whichever store the host runs on (docs/host.md "Bad
 * input"). The SDK's tables (its `a2a-db` migrations) declare `tasks.id`, `tasks.context_id`,
 * `push_notification_configs.task_id` and `.config_id` as varchar(36) and `tenant` as varchar(255):
 * PostgreSQL refuses a longer value (-32603 after the fact) where SQLite stores it, so the edge refuses it
 * first, on both. Lengths count UTF-16 code units, never fewer than PostgreSQL's characters.
 */

/** Which id a value is. */
export type WireIdKind = 'taskId' | 'contextId' | 'configId' | 'tenant' | 'messageId';

/** Longest value of each id (messages ids are not stored in a column of their own). */
const WIRE_ID_MAX_LENGTH: Record<WireIdKind, number> = {
  taskId: 36,
  contextId: 36,
  configId: 36,
  tenant: 255,
  messageId: Number.POSITIVE_INFINITY,
};

/** Control characters (C0, DEL, C1) or a lone surrogate: never part of an id. */
const NOT_IN_ID = /[\p{Cc}\p{Cs}]/u;

/** What is wrong with an id, or undefined when it is within its limits. '' is left to the method to judge. */
export function checkWireId(kind: WireIdKind, value: string): string | undefined {
  if (value.length > WIRE_ID_MAX_LENGTH[kind])
    return `${kind} is longer than ${WIRE_ID_MAX_LENGTH[kind]} characters`;
  if (NOT_IN_ID.test(value)) return `${kind} holds a control character`;
  return undefined;
}

/**
 * Checks the ids of a decoded v1.0 request (any method's params as the SDK's `fromJSON` returns them):
 * `tenant`; `id` (a task id, or a push-config id next to a `taskId`); `taskId`, `contextId`;
 * the message's `messageId`, `taskId`, `contextId`, `referenceTaskIds`; a push config inside
 * `configuration`. Returns the first problem.
 */
export function checkRequestIds(request: object): string | undefined {
  const r = request as Record<string, unknown>;
  const checks: [WireIdKind, unknown][] = [
    ['tenant', r.tenant],
    ['taskId', r.taskId],
    ['contextId', r.contextId],
    [r.taskId === undefined ? 'taskId' : 'configId', r.id],
  ];
  const message = r.message as Record<string, unknown> | undefined;
  if (message) {
    checks.push(
      ['messageId', message.messageId],
      ['taskId', message.taskId],
      ['contextId', message.contextId],
    );
    for (const ref of asArray(message.referenceTaskIds)) checks.push(['taskId', ref]);
  }
  const push = (r.configuration as { taskPushNotificationConfig?: Record<string, unknown> } | undefined)
    ?.taskPushNotificationConfig;
  if (push) checks.push(['configId', push.id], ['taskId', push.taskId], ['tenant', push.tenant]);
  for (const [kind, value] of checks) {
    const problem = typeof value === 'string' ? checkWireId(kind, value) : undefined;
    if (problem) return problem;
  }
  return undefined;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

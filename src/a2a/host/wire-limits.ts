import { RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { checkJsonValue } from '../../shared/json-edge.js';
import { checkId, quoteId, type IdKind } from '../../shared/id-rules.js';

/**
 * The one judgement of a decoded A2A request, whichever transport carried it (docs/host.md "Bad input"):
 * the value profile of src/shared/json-edge.ts and the id rules of src/shared/id-rules.ts, applied to the
 * request as the SDK decoded it (v1.0 types: what its JSON-RPC, HTTP+JSON and gRPC services, and its
 * v0.3 compat layer, all hand the request handler). The HTTP fronts also call it on what they decode
 * first, so a refusal there has the host's ErrorInfo; gRPC has no earlier point.
 */

/** Which id a value is. */
export type WireIdKind = IdKind;

/** What is wrong with an id, or undefined when it is within its limits (src/shared/id-rules.ts). */
export const checkWireId = checkId;

/** The outcome of {@link judgeRequest}: nothing wrong, invalid params, or a lookup that names nothing. */
export type Judgement =
  undefined | { kind: 'invalid'; why: string } | { kind: 'not_found'; idKind: IdKind; id: string };

type Field = readonly [IdKind, unknown];

/** Ids a method looks up (an id no store could hold names no task: TaskNotFound, A2A §3.4.2). */
function lookups(method: string, r: Record<string, unknown>): Field[] {
  switch (method) {
    case 'GetTask':
    case 'CancelTask':
    case 'SubscribeToTask':
      return [['taskId', r.id]];
    case 'CreateTaskPushNotificationConfig':
    case 'ListTaskPushNotificationConfigs':
      return [['taskId', r.taskId]];
    case 'GetTaskPushNotificationConfig':
    case 'DeleteTaskPushNotificationConfig':
      return [
        ['taskId', r.taskId],
        ['configId', r.id],
      ];
    default:
      return [];
  }
}

/** Ids a method creates, stores or filters by (beyond the rules: invalid params). */
function creations(method: string, r: Record<string, unknown>): Field[] {
  const fields: Field[] = [['tenant', r.tenant]];
  if (method === 'CreateTaskPushNotificationConfig') fields.push(['configId', r.id]);
  if (method === 'ListTasks') fields.push(['contextId', r.contextId]);
  const message = r.message as Record<string, unknown> | undefined;
  if (message) {
    fields.push(
      ['messageId', message.messageId],
      ['taskId', message.taskId],
      ['contextId', message.contextId],
    );
    for (const ref of asArray(message.referenceTaskIds)) fields.push(['taskId', ref]);
  }
  const push = (r.configuration as { taskPushNotificationConfig?: Record<string, unknown> } | undefined)
    ?.taskPushNotificationConfig;
  if (push) fields.push(['configId', push.id], ['taskId', push.taskId], ['tenant', push.tenant]);
  return fields;
}

/**
 * Judges a decoded v1.0 request of a method (its JSON-RPC name: `SendMessage`, `GetTask`, …): first the
 * value profile, then the ids it creates, then the ids it looks up.
 */
export function judgeRequest(method: string, request: unknown): Judgement {
  const r = (typeof request === 'object' && request !== null ? request : {}) as Record<string, unknown>;
  const problem = checkJsonValue(request);
  if (problem) return { kind: 'invalid', why: `a JSON value is outside the host's limits (${problem})` };
  for (const [kind, value] of creations(method, r)) {
    const why = typeof value === 'string' ? checkId(kind, value) : undefined;
    if (why) return { kind: 'invalid', why };
  }
  for (const [kind, value] of lookups(method, r)) {
    if (typeof value === 'string' && checkId(kind, value))
      return { kind: 'not_found', idKind: kind, id: value };
  }
  return undefined;
}

/**
 * {@link judgeRequest} as the request handler applies it.
 * @throws RequestMalformedError (-32602, HTTP 400, gRPC INVALID_ARGUMENT) or TaskNotFoundError (-32001,
 * HTTP 404, gRPC NOT_FOUND), quoting at most a prefix of the id.
 */
export function requireJudged(method: string, request: unknown): void {
  const judgement = judgeRequest(method, request);
  if (judgement?.kind === 'invalid') throw new RequestMalformedError(`Invalid params: ${judgement.why}`);
  if (judgement?.kind === 'not_found') {
    const what = judgement.idKind === 'configId' ? 'Push notification config' : 'Task';
    throw new TaskNotFoundError(`${what} not found: ${quoteId(judgement.id)}`);
  }
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

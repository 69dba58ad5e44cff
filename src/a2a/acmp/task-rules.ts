import type { Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { ACMP_METHOD } from '../../acmp/constants.js';
import type { InvokeParams } from '../../acmp/messages.js';
import { paramsHash } from '../../acmp/provider-checks.js';
import { decodeMessage } from '../part-codec.js';
import { acmpRootOf, isAcmpPart } from './codec.js';

/** The caller scope the SDK's task stores use (their default owner resolver): the user name. */
export function callerScope(context: ServerCallContext): string {
  return context.user?.userName || 'unknown';
}

/** Whether a stored task's invoke (its first history message) is the same task as `params`. */
export function sameInvoke(task: Task, params: InvokeParams): boolean {
  const root = acmpRootOf(task.history[0]);
  return root?.kind === 'request' && root.method === ACMP_METHOD.invoke && paramsHash(root.params) === paramsHash(params);
}

/** A task this binding created: its first history message is an ACMP invoke. */
export function isAcmpTask(task: Task): boolean {
  const first = task.history[0];
  return first !== undefined && decodeMessage(first).parts.some(isAcmpPart);
}

import type { ServerCallContext } from '@a2a-js/sdk/server';
import { ANONYMOUS_IDENTITY } from '../shared/identity.js';

/**
 * The identity of the caller of an A2A call: the owner every store records and scopes by (the SDK's task
 * and push-notification stores use it as their owner resolver; bindings use it for their own rows).
 * `agent:<name>` or `token:<digest>` for an authenticated caller, {@link ANONYMOUS_IDENTITY} otherwise —
 * never empty, never a position (src/shared/identity.ts).
 */
export function callerIdentity(context: ServerCallContext | undefined): string {
  const user = context?.user;
  return user?.isAuthenticated && user.userName !== '' ? user.userName : ANONYMOUS_IDENTITY;
}

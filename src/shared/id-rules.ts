/**
 * The id rules of every binding and every store (docs/host.md "Bad input"): one limit, checked the same
 * way whether an id arrives over JSON-RPC, HTTP+JSON, gRPC or MCP.
 *
 * - An id is at most {@link ID_LIMITS}.id characters (UTF-16 code units, never fewer than PostgreSQL's
 *   characters): room for the ids real clients use (UUIDs, ULIDs, prefixed ids, the A2A TCK's 37–44
 *   character task ids). Tenants are at most {@link ID_LIMITS}.tenant (the SDK's varchar(255)).
 * - No id holds a control character (C0, DEL, C1) or a lone surrogate.
 *
 * Where an id is *created* (a new task or context id, a push-config id, a message id), breaking a rule
 * is invalid params. Where an id is *looked up*, an id nobody could have stored names nothing: the
 * answer is the one for an unknown id, given without asking a store.
 */

/** Which id a value is. */
export type IdKind = 'taskId' | 'contextId' | 'configId' | 'tenant' | 'messageId';

/** The limits, in UTF-16 code units. */
export const ID_LIMITS = {
  /** Task, context, push-config and message ids (and ACMP task ids, which are A2A task ids). */
  id: 128,
  /** Tenants (the SDK's `tenant` columns are varchar(255)). */
  tenant: 255,
} as const;

/** How much of an id an error text quotes. */
const QUOTED_ID_LENGTH = 64;

/** Control characters (C0, DEL, C1) or a lone surrogate: never part of an id. */
const NOT_IN_ID = /[\p{Cc}\p{Cs}]/u;

/** The longest value of an id of this kind. */
function idMaxLength(kind: IdKind): number {
  return kind === 'tenant' ? ID_LIMITS.tenant : ID_LIMITS.id;
}

/**
 * What is wrong with an id, or undefined when it keeps the rules; `name` is how the text calls it (the
 * kind by default). '' is left to the method to judge.
 */
export function checkId(kind: IdKind, value: string, name: string = kind): string | undefined {
  const max = idMaxLength(kind);
  if (value.length > max) return `${name} is longer than ${max} characters`;
  if (NOT_IN_ID.test(value)) return `${name} holds a control character`;
  return undefined;
}

/** Whether any store could hold this id (a lookup of one that is not answers "unknown" at once). */
export function isStorableId(kind: IdKind, value: string): boolean {
  return checkId(kind, value) === undefined;
}

/** An id as error texts quote it: at most the first 64 characters, then `…`. */
export function quoteId(value: string): string {
  if (value.length <= QUOTED_ID_LENGTH) return value;
  // Never cut a surrogate pair in two.
  const end = /[\uD800-\uDBFF]/.test(value.charAt(QUOTED_ID_LENGTH - 1))
    ? QUOTED_ID_LENGTH - 1
    : QUOTED_ID_LENGTH;
  return `${value.slice(0, end)}…`;
}

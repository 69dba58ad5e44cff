import jsonpatch from 'fast-json-patch';
import { ACP_OBJECT_KEYS, type AcpObjectKey } from './constants.js';
import type { AcpState, DeltaEnvelope, PatchOperation } from './envelope.js';
import { AcpError } from './errors.js';
import { parsePointer } from './pointer.js';
import { checkStateParts } from './validate.js';

const OBJECT_KEYS: ReadonlySet<string> = new Set<string>(ACP_OBJECT_KEYS);
const ALLOWED_OPS: ReadonlySet<string> = new Set(['add', 'remove', 'replace', 'test']);

/** A policy breach of one operation (index and rule; never the value). */
export interface PatchPolicyIssue {
  index: number;
  pointer: string;
  rule: 'op_not_allowed' | 'path_not_rooted' | 'events_append_only';
}

/** What the delta policy reads of one operation: its `op` and `path`, whatever else it carries. */
export interface PatchOperationHead {
  readonly op: string;
  readonly path: string;
}

/**
 * Checks the design's delta policy (docs/acpspec-core.md "Deltas"): only add/remove/replace/test; paths rooted at one
 * of the eight objects (header fields unpatchable); under `/events` only `add` at `/events/-`.
 * @returns every breach, in the order of the operations; empty when the patch keeps the policy.
 */
export function checkPatchPolicy(patch: readonly PatchOperationHead[]): PatchPolicyIssue[] {
  const issues: PatchPolicyIssue[] = [];
  patch.forEach((operation, index) => {
    const pointer = `/patch/${index}`;
    if (!ALLOWED_OPS.has(operation.op)) {
      issues.push({ index, pointer, rule: 'op_not_allowed' });
      return;
    }
    const segments = parsePointer(operation.path);
    const root = segments[0];
    if (root === undefined || !OBJECT_KEYS.has(root))
      issues.push({ index, pointer, rule: 'path_not_rooted' });
    else if (root === 'events' && !(operation.op === 'add' && operation.path === '/events/-')) {
      issues.push({ index, pointer, rule: 'events_append_only' });
    }
  });
  return issues;
}

/**
 * {@link checkPatchPolicy} for a patch about to be applied.
 * @throws AcpError `ACP_POLICY_VIOLATION` listing every breach.
 */
export function assertPatchPolicy(patch: readonly PatchOperation[]): void {
  const issues = checkPatchPolicy(patch);
  if (issues.length > 0) throw new AcpError('ACP_POLICY_VIOLATION', undefined, { details: { issues } });
}

/**
 * Applies a patch to a state without mutating it. Checks the policy first.
 * @throws AcpError `ACP_POLICY_VIOLATION` (policy), `ACP_PATCH_FAILED` (failed `test`, unresolvable path,
 * or any other RFC 6902 error; `details` names the operation index and reason).
 */
export function applyPatchToState(state: AcpState, patch: readonly PatchOperation[]): AcpState {
  assertPatchPolicy(patch);
  // Copy-on-write instead of a deep clone: before each operation, only the containers on its path are
  // copied (shallowly); every other subtree stays shared with `state`, which is never mutated.
  let document: Record<string, unknown> = { ...state };
  const owned = new WeakSet<object>([document]);
  try {
    patch.forEach((operation, index) => {
      if (operation.op !== 'test') ownPath(document, operation.path, owned);
      // validateOperation=true, mutateDocument=true (on our copies only), banPrototypeModifications=true.
      document = jsonpatch.applyOperation(
        document,
        operation as jsonpatch.Operation,
        true,
        true,
        true,
        index,
      ).newDocument;
    });
    return document as unknown as AcpState;
  } catch (cause) {
    if (cause instanceof jsonpatch.JsonPatchError) {
      const index = typeof cause.index === 'number' ? cause.index : undefined;
      throw new AcpError('ACP_PATCH_FAILED', undefined, {
        details: { index, pointer: index === undefined ? undefined : `/patch/${index}`, reason: cause.name },
        cause,
      });
    }
    throw new AcpError('ACP_PATCH_FAILED', undefined, { details: { reason: 'UNKNOWN' }, cause });
  }
}

/**
 * Makes every container on the way to the parent of `pointer` one of our own copies, so the operation
 * can mutate it. It walks the path as fast-json-patch does (array indexes are all-digit segments) and
 * stops where the path does not resolve to a container or names `__proto__`: the operation itself then
 * fails with fast-json-patch's own error before it mutates anything.
 */
function ownPath(root: Record<string, unknown>, pointer: string, owned: WeakSet<object>): void {
  const segments = parsePointer(pointer);
  let node: Record<string, unknown> | unknown[] = root;
  for (const segment of segments.slice(0, -1)) {
    if (segment === '__proto__') return;
    const key: string | number = Array.isArray(node)
      ? /^[0-9]+$/.test(segment)
        ? Number(segment)
        : -1
      : segment;
    if (key === -1 || !Object.prototype.hasOwnProperty.call(node, key)) return;
    const container = node as Record<string | number, unknown>;
    const child = container[key];
    if (child === null || typeof child !== 'object') return;
    let copy = child as Record<string, unknown> | unknown[];
    if (!owned.has(copy)) {
      copy = Array.isArray(copy) ? [...copy] : { ...copy };
      owned.add(copy);
      container[key] = copy;
    }
    node = copy;
  }
}

/**
 * Applies a delta to its parent's state and checks that the result is a complete, valid snapshot
 * (docs/acpspec-core.md "Deltas": otherwise the whole delta is rejected). The parent is valid, so only what the patch
 * changed is checked (docs/acpspec-core.md "Ingest path"): the objects its operations write, and the events it appends — the same
 * issues a check of the whole result would report, at a cost that does not grow with the stream.
 * @throws AcpError `ACP_POLICY_VIOLATION`; `ACP_PATCH_FAILED` (with `details.issues` when the result
 * does not validate).
 */
export function applyDelta(parent: AcpState, delta: DeltaEnvelope): AcpState {
  const state = applyPatchToState(parent, delta.patch);
  const changed = new Set<AcpObjectKey>();
  for (const operation of delta.patch) {
    const root = parsePointer(operation.path)[0];
    // The policy (checked above) roots every path at one of the eight objects and only appends to events.
    const key = ACP_OBJECT_KEYS.find((k) => k === root);
    if (operation.op !== 'test' && key !== undefined && key !== 'events') changed.add(key);
  }
  const issues = checkStateParts(state, changed, parent.events.length);
  if (issues.length > 0)
    throw new AcpError('ACP_PATCH_FAILED', 'patch result is not a valid snapshot', { details: { issues } });
  return state;
}

import { describe, expect, it } from 'vitest';
import { applyDelta, applyPatchToState, assertPatchPolicy } from './delta.js';
import { isAcpError } from './errors.js';
import { delta, eventOp, leadState, snapshot } from '../../test/helpers/acp-builders.js';

const codeOf = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return isAcpError(error) ? error.code : error;
  }
  return undefined;
};

describe('delta application (docs/acpspec-core.md "Deltas")', () => {
  it('applies a patch without mutating the parent', () => {
    const parent = leadState();
    const before = JSON.stringify(parent);
    const result = applyPatchToState(parent, [{ op: 'replace', path: '/quote/status', value: 'draft' }]);
    expect(result.quote.status).toBe('draft');
    expect(JSON.stringify(parent)).toBe(before);
  });

  it('shares every subtree the patch does not touch with the parent (copy on write)', () => {
    const parent = leadState();
    const result = applyPatchToState(parent, [
      { op: 'replace', path: '/quote/status', value: 'draft' },
      eventOp('ev-2'),
    ]);
    expect(result.parties).toBe(parent.parties);
    expect(result.quote).not.toBe(parent.quote);
    expect(parent.events).toHaveLength(1);
  });

  it('leaves the parent untouched when a later operation fails', () => {
    const parent = leadState();
    const before = JSON.stringify(parent);
    expect(() =>
      applyPatchToState(parent, [
        { op: 'replace', path: '/quote/status', value: 'draft' },
        { op: 'test', path: '/quote/status', value: 'none' },
      ]),
    ).toThrow();
    expect(JSON.stringify(parent)).toBe(before);
  });

  it('appends events at /events/-', () => {
    expect(applyPatchToState(leadState(), [eventOp('ev-2')]).events.map((e) => e.event_id)).toEqual([
      'ev-lead-1',
      'ev-2',
    ]);
  });

  it.each([
    ['/events/0 replaced', { op: 'replace', path: '/events/0', value: {} }],
    ['/events/0 removed', { op: 'remove', path: '/events/0' }],
    ['/events replaced', { op: 'replace', path: '/events', value: [] }],
    ['/events/0 inserted', { op: 'add', path: '/events/0', value: {} }],
    ['header patched', { op: 'replace', path: '/envelope_id', value: 'x' }],
    ['root replaced', { op: 'replace', path: '', value: {} }],
    ['move op', { op: 'move', path: '/quote', from: '/financing' }],
  ] as const)('rejects %s as ACP_POLICY_VIOLATION', (_name, op) => {
    expect(codeOf(() => assertPatchPolicy([op as never]))).toBe('ACP_POLICY_VIOLATION');
  });

  it('rejects the whole delta when a test fails', () => {
    expect(
      codeOf(() =>
        applyPatchToState(leadState(), [{ op: 'test', path: '/quote/status', value: 'accepted' }]),
      ),
    ).toBe('ACP_PATCH_FAILED');
  });

  it('names the failing operation without its value', () => {
    try {
      applyPatchToState(leadState(), [{ op: 'replace', path: '/vehicles/none/year', value: 1999 }]);
    } catch (error) {
      expect(isAcpError(error) && error.data).toEqual({
        index: 0,
        pointer: '/patch/0',
        reason: 'OPERATION_PATH_UNRESOLVABLE',
      });
    }
  });

  it('rejects a result that is not a complete snapshot', () => {
    const bad = delta(snapshot(), [{ op: 'replace', path: '/quote/status', value: 'haggling' }]);
    expect(codeOf(() => applyDelta(leadState(), bad))).toBe('ACP_PATCH_FAILED');
  });
});

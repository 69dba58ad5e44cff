import { describe, expect, it } from 'vitest';
import { canonicalJson, canonicalJsonShared } from './jcs.js';

describe('canonicalJsonShared (RFC 8785 with shared subtrees)', () => {
  const values: [string, unknown][] = [
    [
      'a nested object with unsorted keys',
      { b: 1, a: { d: [1, 'x', { z: null, y: true }], c: 'é' }, '\u00e9': 2, A: 0 },
    ],
    ['members whose value is undefined', { a: undefined, b: { c: undefined, d: 1 } }],
    ['undefined array items', [undefined, 1, [undefined]]],
    ['an object with toJSON', { when: new Date(0), nested: { also: new Date(1) } }],
    ['numbers JCS writes specially', { n: [1e21, 0.1, -0, 1e-7] }],
    ['a primitive root', 'text'],
  ];

  it.each(values)('equals canonicalJson for %s', (_name, value) => {
    expect(canonicalJsonShared(value, new WeakMap())).toBe(canonicalJson(value));
  });

  it('reuses the text of a shared subtree and serialises only the new parts', () => {
    const memo = new WeakMap<object, string>();
    const shared = { items: [{ id: 1 }, { id: 2 }] };
    const first = { shared, events: [{ id: 'a' }] };
    expect(canonicalJsonShared(first, memo)).toBe(canonicalJson(first));
    const next = { ...first, events: [...first.events, { id: 'b' }] };
    expect(canonicalJsonShared(next, memo)).toBe(canonicalJson(next));
    expect(memo.get(shared)).toBe(canonicalJson(shared));
  });

  it('throws like canonicalJson for a value JSON cannot carry', () => {
    expect(() => canonicalJsonShared({ a: { b: Number.NaN } }, new WeakMap())).toThrow(/canonicalised/);
  });
});

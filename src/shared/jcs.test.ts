import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, canonicalJsonShared } from './jcs.js';

describe('canonicalJson (RFC 8785)', () => {
  // The reference: the `canonicalize` library, an RFC 8785 implementation this one replaced for speed.
  const wellFormed = (s: string): boolean => {
    try {
      encodeURIComponent(s);
      return true;
    } catch {
      return false;
    }
  };
  const jsonish = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.string({ unit: 'grapheme' }),
      fc.string({ unit: 'binary' }).filter(wellFormed),
      fc.array(tie('value')),
      fc.dictionary(fc.string({ unit: 'binary' }).filter(wellFormed), tie('value')),
      fc.constant(undefined),
    ),
  })).value;

  it('writes exactly what the canonicalize library writes', () => {
    fc.assert(
      fc.property(jsonish, (value) => {
        const reference = canonicalize(value);
        if (reference === undefined) expect(() => canonicalJson(value)).toThrow(/canonicalised/);
        else expect(canonicalJson(value)).toBe(reference);
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts members by UTF-16 code units, not by code points (§3.2.3)', () => {
    // U+FB33 sorts before U+1F600 (surrogates D83D…) by code points, after it by UTF-16 code units.
    expect(canonicalJson({ '\ufb33': 1, '\u{1f600}': 2, a: 3 })).toBe('{"a":3,"\u{1f600}":2,"\ufb33":1}');
  });

  it.each([
    ['a lone high surrogate', { a: 'x\ud800' }],
    ['a lone low surrogate in a key', { '\udc00': 1 }],
    ['a non-finite number', [Number.POSITIVE_INFINITY]],
    ['a bigint', { n: 1n }],
    ['a function', { f: () => 1 }],
    ['undefined at the root', undefined],
  ])('refuses %s', (_name, value) => {
    expect(() => canonicalJson(value)).toThrow(/canonicalised/);
  });

  it('refuses a cycle instead of overflowing the stack', () => {
    const cycle: Record<string, unknown> = {};
    cycle['self'] = { cycle };
    expect(() => canonicalJson(cycle)).toThrow(/canonicalised/);
  });
});

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

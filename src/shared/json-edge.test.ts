import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkJsonBytes, checkJsonValue, JSON_LIMITS } from './json-edge.js';

const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const problemOf = (text: string) => {
  const check = checkJsonBytes(bytes(text));
  return check.ok ? undefined : check.problem;
};

describe('checkJsonBytes (I-JSON, RFC 7493, plus a depth limit)', () => {
  it('parses a body inside the profile', () => {
    expect(checkJsonBytes(bytes('{"a":[1,-0.5,"ü😀",null,true]}'))).toEqual({
      ok: true,
      value: { a: [1, -0.5, 'ü😀', null, true] },
    });
  });

  it('reads an empty body as no value', () => {
    expect(checkJsonBytes(new Uint8Array())).toEqual({ ok: true, value: undefined });
  });

  it('ignores a leading byte order mark (RFC 8259 §8.1)', () => {
    expect(checkJsonBytes(Buffer.from([0xef, 0xbb, 0xbf, 0x31]))).toEqual({ ok: true, value: 1 });
  });

  it('refuses bytes that are not UTF-8 instead of replacing them with U+FFFD', () => {
    expect(checkJsonBytes(Buffer.concat([bytes('"HON'), Buffer.from([0xff]), bytes('DA"')]))).toEqual({
      ok: false,
      problem: 'utf8',
    });
    // An encoded surrogate (CESU-8) is not UTF-8 either.
    expect(checkJsonBytes(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))).toEqual({
      ok: false,
      problem: 'utf8',
    });
  });

  it('refuses text that is not JSON', () => {
    expect(problemOf('{"a":')).toBe('syntax');
    expect(problemOf('  ')).toBe('syntax');
  });

  it('refuses numbers JSON text cannot carry exactly', () => {
    expect(problemOf('1e309')).toBe('number');
    expect(problemOf('[-1e309]')).toBe('number');
    expect(problemOf('{"n":9007199254740993}')).toBe('number');
    expect(problemOf('9007199254740992')).toBe('number');
    // Above 2^53 every double is an integer, and JSON.parse cannot tell whether it was rounded.
    expect(problemOf('1e20')).toBe('number');
    expect(problemOf('1.5e300')).toBe('number');
  });

  it('accepts the safe integers at the edges and fractions', () => {
    expect(problemOf('[9007199254740991,-9007199254740991,0.1,123456.789,1e-400]')).toBeUndefined();
  });

  it('refuses a lone surrogate and U+0000 in values and member names', () => {
    expect(problemOf('"\\ud800"')).toBe('string');
    expect(problemOf('{"\\udc00":1}')).toBe('string');
    expect(problemOf('["a\\u0000b"]')).toBe('string');
    expect(problemOf('"\\ud83d\\ude00"')).toBeUndefined();
  });

  it('refuses nesting deeper than the limit, however deep, without recursion', () => {
    const nest = (n: number): string => '['.repeat(n) + ']'.repeat(n);
    expect(problemOf(nest(JSON_LIMITS.maxDepth))).toBeUndefined();
    expect(problemOf(nest(JSON_LIMITS.maxDepth + 1))).toBe('depth');
    expect(problemOf(nest(200_000))).toBe('depth');
  });
});

describe('checkJsonValue', () => {
  it('takes a depth limit', () => {
    expect(checkJsonValue({ a: { b: 1 } }, 1)).toBe('depth');
    expect(checkJsonValue({ a: { b: 1 } }, 2)).toBeUndefined();
  });

  /** The profile stated recursively: whether a value breaks it at all, whatever the walk's order. */
  const breaks = (value: unknown, depth: number, maxDepth: number): boolean => {
    if (typeof value === 'string') return checkJsonValue(value) !== undefined;
    if (typeof value === 'number') return checkJsonValue(value) !== undefined;
    if (typeof value !== 'object' || value === null) return false;
    if (depth + 1 > maxDepth) return true;
    const members = Array.isArray(value) ? (value as unknown[]) : Object.values(value);
    if (!Array.isArray(value) && Object.keys(value).some((k) => checkJsonValue(k) !== undefined)) return true;
    return members.some((m) => breaks(m, depth + 1, maxDepth));
  };
  const odd = fc.oneof(
    fc.constantFrom('\u0000', '\ud800', 'a\udfffb', 2 ** 53, -(2 ** 53), Infinity, NaN),
    fc.string(),
    fc.double(),
    fc.integer(),
  );
  const values = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      odd,
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('\u0000k', '\ud800')), tie('value'), {
        maxKeys: 4,
      }),
    ),
  })).value;

  it('refuses exactly the values the recursive statement of the profile refuses', () => {
    fc.assert(
      fc.property(values, fc.integer({ min: 1, max: 6 }), (value, maxDepth) => {
        expect(checkJsonValue(value, maxDepth) !== undefined).toBe(breaks(value, 0, maxDepth));
      }),
      { numRuns: 2000 },
    );
  });

  it('reports the problem its walk meets first (last member first, depth first), unchanged', () => {
    expect(checkJsonValue({ a: '\u0000', b: { c: { d: 1 } } }, 2)).toBe('depth');
    expect(checkJsonValue({ b: { c: { d: 1 } }, a: '\u0000' }, 2)).toBe('string');
    expect(checkJsonValue({ k: 1, ['\ud800']: 1 })).toBe('string');
    expect(checkJsonValue(Object.create({ inherited: '\u0000' }) as object)).toBeUndefined();
  });
});

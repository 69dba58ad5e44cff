import fc from 'fast-check';

/**
 * JSON text arbitraries for the fuzz suite. Bodies are built as text, not with JSON.stringify, so that
 * they can hold what no JavaScript value serialises to: numbers beyond a double (`1e309`), integers JSON.parse
 * rounds (`9007199254740993`), escaped lone surrogates, U+0000, nesting far beyond any limit.
 */

/** A JSON string literal of `value`. */
export const str = (value: string): string => JSON.stringify(value);

/** An object literal from `[key, valueText]` pairs; undefined values are left out. */
export function obj(entries: readonly (readonly [string, string | undefined])[]): string {
  return `{${entries
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${str(k)}:${v!}`)
    .join(',')}}`;
}

/** An array literal from value texts. */
export const arr = (items: readonly string[]): string => `[${items.join(',')}]`;

/** Nesting far beyond the edge's depth limit (and beyond what a recursive walker survives). */
export const deepText: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 60, max: 12_000 }), fc.boolean())
  .map(([n, arrays]) => (arrays ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n)));

/** Scalars a careless parser or store mishandles. */
export const nastyScalarText: fc.Arbitrary<string> = fc.constantFrom(
  '1e309',
  '-1e309',
  '1E400',
  '9007199254740993',
  '-9007199254740993',
  '9007199254740992',
  '1e20',
  '123456789012345678901234567890',
  '-0',
  '1e-400',
  '"\\ud800"',
  '"x\\udfff"',
  '"a\\u0000b"',
  '"\\u0007"',
  '"\\u001b[31m"',
  '"\\ud83d\\ude00"',
  '"\u00fc\u4e2d"',
  '""',
  '"%ZZ"',
  '"../../etc/passwd"',
);

/** Ordinary scalars. */
const scalarText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('true', 'false', 'null', '0', '1', '-1', '0.5'),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }).map((d) => JSON.stringify(d)),
  fc.string({ maxLength: 24 }).map(str),
);

/** A member name: mostly plain, sometimes one that breaks the profile or prototype-pollution bait. */
const keyText: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.string({ minLength: 1, maxLength: 10 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('__proto__', 'constructor', '', '\ud800', 'a\u0000b', 'kind', 'data', 'text'),
  },
);

/** Any JSON text, now and then outside the profile. */
export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string; array: string; object: string }>(
  (tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 12, arbitrary: scalarText },
      { weight: 1, arbitrary: nastyScalarText },
      { weight: 2, arbitrary: tie('array') },
      { weight: 2, arbitrary: tie('object') },
    ),
    array: fc.array(tie('value'), { maxLength: 4 }).map(arr),
    object: fc
      .array(fc.tuple(keyText, tie('value')), { maxLength: 4 })
      .map((entries) => `{${entries.map(([k, v]) => `${str(k)}:${v}`).join(',')}}`),
  }),
).value;

/** A value where a field of one type is expected: the right kind `weight` times in `weight + 1`, else anything. */
export function either(good: fc.Arbitrary<string>, weight = 30): fc.Arbitrary<string> {
  const anything = fc.oneof(
    { weight: 3, arbitrary: fc.oneof(scalarText, nastyScalarText, jsonText) },
    { weight: 1, arbitrary: deepText.filter((t) => t.length < 4000) },
  );
  return fc.oneof({ weight, arbitrary: good }, { weight: 1, arbitrary: anything });
}

/** A member present one time in `oneIn` (left out otherwise). */
export function maybe<T>(value: fc.Arbitrary<T>, oneIn = 2): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value });
}

/** Ids as JSON text: ordinary, at and beyond the limits, with control characters, of the wrong type. */
export const idText: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.stringMatching(/^[a-z0-9-]{1,20}$/).map(str) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }).map(str) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      str('x'.repeat(36)),
      str('x'.repeat(37)),
      str('t'.repeat(255)),
      str('t'.repeat(256)),
      '"a\\u0000b"',
      '"a\\u0007b"',
      '"\\ud800"',
      '""',
      '1',
      '[1,2]',
      '{"a":1}',
      'null',
    ),
  },
  { weight: 1, arbitrary: deepText.filter((t) => t.length < 4000) },
);

/** A path segment as it appears in a URL: ids, bad percent-encoding, over-long, encoded control characters. */
export const pathIdArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.stringMatching(/^[a-z0-9-]{1,20}$/) },
  { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '%ZZ',
      '%',
      '%E2%80',
      '%C3%28',
      '%00',
      'a%07b',
      '%ED%A0%80',
      'x'.repeat(37),
      't'.repeat(300),
      '..',
      '%2F',
    ),
  },
);

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PayloadSchema } from '../wire/task-messages.js';
import { checkPayload } from './payload-check.js';

/** What the schema alone answers: the payload it returns, or the error the check throws. */
function bySchema(value: unknown): unknown {
  const parsed = PayloadSchema.safeParse(value);
  return parsed.success ? parsed.data : 'refused';
}

function byCheck(value: unknown): unknown {
  try {
    return checkPayload(value);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return 'refused';
  }
}

/** Deep equality that also compares key order (the order is what a payload serialises to). */
function sameJson(a: unknown, b: unknown): void {
  expect(a).toStrictEqual(b);
  expect(JSON.stringify(a)).toBe(JSON.stringify(b));
}

describe('checkPayload', () => {
  it('answers exactly as the payload schema, for payload-like and arbitrary values', () => {
    const member = fc.oneof(fc.string(), fc.constant(''), fc.integer(), fc.anything());
    const payloadLike = fc.oneof(
      fc.record({ type: member, data: member }),
      fc.record({ data: member, type: member }),
      fc.record({ type: member, data: member, extra: fc.anything() }),
      fc.record({ type: member }, { requiredKeys: [] }),
      fc.anything({ withNullPrototype: true, withDate: true, withMap: true, withTypedArray: true }),
    );
    fc.assert(
      fc.property(payloadLike, (value) => sameJson(byCheck(value), bySchema(value))),
      { numRuns: 3000 },
    );
  });

  it('rebuilds a text chunk in the schema order, apart from the handler’s object', () => {
    const chunk = { data: 'chunk 0', type: 'text' };
    const checked = checkPayload(chunk);
    expect(Object.keys(checked)).toEqual(['type', 'data']);
    expect(checked).not.toBe(chunk);
    expect(checked).toStrictEqual(PayloadSchema.parse(chunk));
  });

  it('leaves what the fast path does not recognise to the schema', () => {
    const inherited = Object.assign(Object.create({ extra: 1 }) as object, { type: 'text', data: 'x' });
    expect(checkPayload(inherited)).toStrictEqual(bySchema(inherited));
    expect(checkPayload({ type: 'json', data: { n: 1 } })).toStrictEqual({ type: 'json', data: { n: 1 } });
    expect(() => checkPayload({ type: '', data: 'x' })).toThrow(TypeError);
    expect(() => checkPayload({ type: 'text' })).toThrow(TypeError);
    expect(() => checkPayload({ type: 'text', data: Number.NaN })).toThrow(TypeError);
  });
});

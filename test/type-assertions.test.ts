import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  anyKeywordCount,
  anyTypeUses,
  assertionCount,
  assertionCounts,
  assertionGrowth,
} from './helpers/type-assertions.js';

/*
 * Type assertions in src/ cannot grow (docs/house-rules.md "Decode every inbound value"): a value from
 * the wire, a file, the database or a peer is decoded by a schema, not cast. test/type-assertions.allow.json
 * holds each production file's allowance; lower it when a file loses casts, never raise it to let a new
 * cast in — decode instead.
 */

const ROOT = new URL('..', import.meta.url).pathname;
const ALLOWED = z
  .record(z.string(), z.int().positive())
  .parse(JSON.parse(readFileSync(new URL('type-assertions.allow.json', import.meta.url), 'utf8')));

describe('type assertions in src/ (docs/house-rules.md "Decode every inbound value")', () => {
  it('stay within each file’s allowance, and no new file has any', () => {
    const counts = assertionCounts(ROOT);
    expect(Object.keys(counts).length).toBeGreaterThan(10);
    expect(assertionGrowth(counts, ALLOWED)).toEqual([]);
  });
});

/*
 * Storage has one typed edge (src/storage/sql/query.ts): every table nameable, every column `unknown` until
 * decoded. The SDK stores' adapter takes that instance as it is typed, so no `any` reaches storage either.
 */
describe('the storage edge (STYLE.md "Boundaries": a database row is decoded at the edge)', () => {
  it('writes no `any` type in src/storage or the SDK stores’ adapter', () => {
    expect(anyTypeUses(ROOT, ['src/storage', 'src/a2a/host/sdk-stores.ts'])).toEqual({});
  });
});

describe('the assertion counter', () => {
  it('counts `as T` and `<T>x`, not `as const` or `as unknown`', () => {
    const source = [
      'const a = JSON.parse(s) as Foo;',
      'const b = <Bar>value;',
      "const c = ['x'] as const;",
      'const d = value as unknown;',
      'const e = value as unknown as Baz;',
    ].join('\n');
    expect(assertionCount('x.ts', source)).toBe(3);
  });

  it('counts `any` types, not the word in comments or strings', () => {
    const source = ['// any row', "const s = 'any';", 'let a: any;', 'type K = Kysely<any>;'].join('\n');
    expect(anyKeywordCount('x.ts', source)).toBe(2);
  });

  it('reports a file over its allowance and a new file', () => {
    expect(
      assertionGrowth({ 'src/a.ts': 2, 'src/b.ts': 1, 'src/c.ts': 1 }, { 'src/a.ts': 1, 'src/c.ts': 1 }),
    ).toEqual(['src/a.ts: 2 type assertions, 1 allowed', 'src/b.ts: 1 type assertions, 0 allowed']);
  });
});

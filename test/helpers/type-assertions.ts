import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { tsFiles } from './layering.js';

/*
 * Counts type assertions (`x as T`, `<T>x`) in production code (docs/house-rules.md "Decode every
 * inbound value"). `as const` is a literal annotation and `as unknown` only widens: neither asserts
 * anything, so neither counts. A `satisfies` check is not an assertion.
 */

/** The number of counted type assertions in one source text. */
export function assertionCount(path: string, source: string): number {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  let count = 0;
  const visit = (node: ts.Node): void => {
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const type = node.type;
      const isConst =
        ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) && type.typeName.text === 'const';
      if (!isConst && type.kind !== ts.SyntaxKind.UnknownKeyword) count++;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return count;
}

/** Counted assertions per production file of `src/` (tests excluded), files without any left out. */
export function assertionCounts(root: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const path of tsFiles(root, 'src')) {
    if (path.endsWith('.test.ts')) continue;
    const n = assertionCount(path, readFileSync(join(root, path), 'utf8'));
    if (n > 0) counts[path] = n;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

/** Where `counts` exceeds `allowed`: a file over its allowance, or a file with none. */
export function assertionGrowth(
  counts: Readonly<Record<string, number>>,
  allowed: Readonly<Record<string, number>>,
): string[] {
  return Object.entries(counts).flatMap(([file, n]) => {
    const limit = allowed[file] ?? 0;
    return n > limit ? [`${file}: ${n} type assertions, ${limit} allowed`] : [];
  });
}

/**
 * The production files under `folders` of `src/` (tests excluded) that write the `any` type, each with how
 * many times; an `eslint-disable` cannot hide one from this count.
 */
export function anyTypeUses(root: string, folders: readonly string[]): Record<string, number> {
  const uses: Record<string, number> = {};
  for (const path of tsFiles(root, 'src')) {
    if (path.endsWith('.test.ts') || !folders.some((f) => path === f || path.startsWith(`${f}/`))) continue;
    const n = anyKeywordCount(path, readFileSync(join(root, path), 'utf8'));
    if (n > 0) uses[path] = n;
  }
  return uses;
}

/** The number of `any` type keywords in one source text. */
export function anyKeywordCount(path: string, source: string): number {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  let count = 0;
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.AnyKeyword) count++;
    ts.forEachChild(node, visit);
  };
  visit(file);
  return count;
}

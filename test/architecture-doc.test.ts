import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/* docs/architecture.md is a map: every file and folder it names must exist. */

const ROOT = new URL('..', import.meta.url);
const DOC = readFileSync(new URL('docs/architecture.md', ROOT), 'utf8');

/** The repository paths the page names in backticks (`src/…`, `test/…`, `docs/…`, `schemas/`). */
function namedPaths(text: string): string[] {
  const paths = [...text.matchAll(/`((?:src|test|docs|schemas)\/[^`\s]*)`/g)].map((m) => m[1]!);
  return [...new Set(paths)].map((p) => p.replace(/\/$/, '')).filter((p) => !p.includes('<'));
}

describe('docs/architecture.md', () => {
  it('names only paths that exist', () => {
    const paths = namedPaths(DOC);
    expect(paths.length).toBeGreaterThan(40);
    expect(paths.filter((p) => !existsSync(new URL(p, ROOT)))).toEqual([]);
  });

  it('finds a missing path', () => {
    expect(namedPaths('see `src/acmp/no-such-file.ts` and `docs/x.md`')).toEqual([
      'src/acmp/no-such-file.ts',
      'docs/x.md',
    ]);
  });
});

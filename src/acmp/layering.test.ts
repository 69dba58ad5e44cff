import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

function imports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);
}

describe('layering (STYLE.md "Layout")', () => {
  it('keeps src/acmp free of bindings, servers and the A2A SDK (tests may use storage)', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(join(SRC, 'acmp'))) {
      const isTest = file.endsWith('.test.ts');
      for (const spec of imports(file)) {
        const allowed =
          !spec.startsWith('.') ? !spec.startsWith('@a2a-js/') : spec.startsWith('./') || spec.startsWith('../shared/') || (isTest && spec.startsWith('../storage/'));
        if (!allowed) offenders.push(`${relative(SRC, file)} → ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('lets the ACMP stores import only acmp, shared and storage modules', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(join(SRC, 'storage')).filter((f) => f.includes('acmp-task-store'))) {
      for (const spec of imports(file)) {
        if (spec.startsWith('.') && !/^\.\.\/(acmp|shared)\/|^\.\//.test(spec)) offenders.push(`${relative(SRC, file)} → ${spec}`);
        if (spec.startsWith('@a2a-js/')) offenders.push(`${relative(SRC, file)} → ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dir = new URL('./', import.meta.url);

describe('src/acpspec layering (STYLE.md "Layout")', () => {
  it('imports only src/shared, its own modules and libraries (tests may use storage and test helpers)', () => {
    const breaches: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(new URL(file, dir), 'utf8');
      for (const [, spec] of text.matchAll(/from '([^']+)'/g)) {
        if (spec === undefined || !spec.startsWith('.')) {
          if (spec?.startsWith('@a2a-js/')) breaches.push(`${file}: ${spec}`);
          continue;
        }
        const allowed = spec.startsWith('./') || spec.startsWith('../shared/');
        const testOnly = file.endsWith('.test.ts') && (spec.startsWith('../storage/acp-') || spec.startsWith('../../test/helpers/acp-'));
        if (!allowed && !testOnly) breaches.push(`${file}: ${spec}`);
      }
    }
    expect(breaches).toEqual([]);
  });
});

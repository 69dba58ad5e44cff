import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  allowScripts?: Record<string, boolean>;
};
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};

/** The package name of a lockfile path (`node_modules/@scope/name`, nested paths included). */
const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('install scripts (npm allowScripts)', () => {
  it('declares every dependency whose install script runs, so `npm ci` neither warns nor skips one', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
      .map(([path]) => nameOf(path));
    expect(withScripts.length).toBeGreaterThan(0);
    const undeclared = withScripts.filter((name) => typeof pkg.allowScripts?.[name] !== 'boolean');
    expect(undeclared).toEqual([]);
  });

  it('allows the native build the embedded SQLite default needs', () => {
    expect(pkg.allowScripts?.['better-sqlite3']).toBe(true);
  });
});

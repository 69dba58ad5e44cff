import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * Whether child processes start from the built package (dist/) instead of the sources through tsx.
 * `.ci/run` sets `A2AC_TEST_DIST=1` after `npm ci`, whose `prepare` script has just built dist/ from the
 * same checkout (`npm run build`: tsc, then the console's vite build). tsx compiles every module again
 * at each child start — about 1.5 s of CPU more per child than `node dist/cli/bin.js` on the CI machine,
 * for some hundred CLI children — and the built CLI is the very file the package's `bin` names.
 * Anywhere else (a developer's `npx vitest run`) the sources run as before. A dist/ older than a file
 * under src/ or console/ is refused rather than used: a stale build would test old code.
 */
export function useDist(): boolean {
  if (process.env.A2AC_TEST_DIST !== '1') return false;
  fresh ??= checkFresh();
  return true;
}

let fresh: true | undefined;

/** The newest modification time of a file under `dir` (skipping node_modules), ms. */
function newest(dir: string): number {
  let max = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    max = Math.max(max, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return max;
}

/** @throws Error when dist/ is missing or older than the sources it is built from. */
function checkFresh(): true {
  for (const [built, sources] of [
    ['dist/cli/bin.js', 'src'],
    ['dist/console/index.html', 'console'],
  ] as const) {
    let builtAt: number;
    try {
      builtAt = statSync(join(ROOT, built)).mtimeMs;
    } catch {
      throw new Error(`A2AC_TEST_DIST=1 but ${built} is missing: run npm run build`);
    }
    if (newest(join(ROOT, sources)) > builtAt)
      throw new Error(`A2AC_TEST_DIST=1 but ${built} is older than ${sources}/: run npm run build`);
  }
  return true;
}

/** The CLI's entry point: dist/cli/bin.js under {@link useDist}, else src/cli/bin.ts through tsx. */
export function cliCommand(): string[] {
  return useDist() ? [join(ROOT, 'dist/cli/bin.js')] : ['--import', 'tsx', join(ROOT, 'src/cli/bin.ts')];
}

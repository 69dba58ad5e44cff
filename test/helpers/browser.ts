import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { useDist } from './dist.js';

/** Debian's chromium (`apt-get install chromium`), or the one `A2AC_CHROMIUM` names. */
const CHROMIUM = process.env.A2AC_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Whether the browser tests can run: chromium is there. Set by `.ci/run`, `A2AC_EXPECT_BROWSER=1` says a
 * missing browser is a failure, not a reason to skip (CI installs it).
 */
export function browserAvailability(): { run: true } | { run: false; reason: string } {
  if (existsSync(CHROMIUM)) return { run: true };
  const reason = `no chromium at ${CHROMIUM} (apt-get install chromium, or set A2AC_CHROMIUM)`;
  if (process.env.A2AC_EXPECT_BROWSER === '1') throw new Error(`CI expects a browser: ${reason}`);
  return { run: false, reason };
}

/** A headless chromium with a fresh profile, the flags that keep it off the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Builds the console's assets into dist/console (what the host serves), so the browser test runs the
 * sources as they are now, also from a tree that was never built. Under `A2AC_TEST_DIST=1` (`.ci/run`,
 * after `npm ci` built them) the build is there and no older than console/ (./dist.js checks): kept.
 */
export function buildConsoleAssets(): void {
  if (useDist()) return;
  execFileSync(
    process.execPath,
    [`${ROOT}node_modules/vite/bin/vite.js`, 'build', '--config', 'console/vite.config.ts'],
    {
      cwd: ROOT,
      stdio: 'pipe',
    },
  );
}

/**
 * Where a page's screenshot goes: test-results/console/ (artifacts); with `A2AC_CONSOLE_DOCS=1` it is
 * copied to docs/console/ as well (the pictures docs/console.md shows).
 */
export function screenshotPath(name: string): string {
  const dir = `${ROOT}test-results/console/`;
  mkdirSync(dir, { recursive: true });
  return `${dir}${name}.png`;
}

/** Copies a screenshot into docs/console/ when `A2AC_CONSOLE_DOCS=1`. */
export function publishScreenshot(name: string): void {
  if (process.env.A2AC_CONSOLE_DOCS !== '1') return;
  mkdirSync(`${ROOT}docs/console/`, { recursive: true });
  copyFileSync(screenshotPath(name), `${ROOT}docs/console/${name}.png`);
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The one cleanup registry of the tests: helpers register what they opened (hosts, directories,
 * databases, processes) and a test file runs `afterEach(cleanup)` — or `afterAll(cleanup)` for what a
 * file shares — so everything closes, newest first, even when an assertion failed.
 */
const cleanups: (() => Promise<void> | void)[] = [];

/** Runs and forgets every registered cleanup, newest first (call from afterEach or afterAll). */
export async function cleanup(): Promise<void> {
  for (let fn = cleanups.pop(); fn; fn = cleanups.pop()) await fn();
}

/** Registers a cleanup. */
export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

/** A fresh temporary directory, removed by {@link cleanup}. */
export function tempDir(prefix = 'a2ac-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

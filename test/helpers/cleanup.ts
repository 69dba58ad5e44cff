import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/**
 * The one cleanup registry of the tests: helpers register what they opened (hosts, directories,
 * databases, processes) and a test file runs `afterEach(cleanup)` — or `afterAll(cleanup)` for what a
 * file shares — so everything closes, newest first, even when an assertion failed.
 */
let cleanups: (() => Promise<void> | void)[] = [];

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

/**
 * One resource for every test of the enclosing file or `describe` — a host the tests only talk to, never
 * restart or reconfigure: `start` runs in `beforeAll`, and what it registered with {@link onCleanup}
 * (the host, its data directory, a database) is kept out of the per-test {@link cleanup} and closed in
 * `afterAll`. Returns a getter for use inside the tests.
 */
export function shared<T>(start: () => Promise<T>): () => T {
  let value: { current: T } | undefined;
  const mine: (() => Promise<void> | void)[] = [];
  beforeAll(async () => {
    const outer = cleanups;
    cleanups = mine;
    try {
      value = { current: await start() };
    } finally {
      cleanups = outer;
    }
  });
  afterAll(async () => {
    for (let fn = mine.pop(); fn; fn = mine.pop()) await fn();
  });
  return () => {
    if (!value) throw new Error('a shared resource exists inside the tests only');
    return value.current;
  };
}

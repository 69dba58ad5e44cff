import { existsSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { resolveDatabaseTarget } from '../storage/sql/database.js';
import type { HostConfig } from './config.js';
import { selfSignedPaths } from './tls.js';

/** Removes what a failed start created, best effort: the start already failed with the error that matters. */
export function removeQuietly(paths: readonly string[]): void {
  for (const path of paths) {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Not ours to report (e.g. a path below a file): the start's own error says what is wrong.
    }
  }
}

/**
 * The paths a start may create that do not exist yet (the topmost missing directory of each, or the
 * SQLite file and its companions), so a failed start can remove exactly what it made.
 */
export function pathsThisStartMayCreate(config: HostConfig): string[] {
  const candidates: string[] = [];
  if (config.tls.mode === 'self-signed') candidates.push(dirname(selfSignedPaths(config.dataDir).cert));
  if (config.db !== 'memory') {
    const target = resolveDatabaseTarget(config.db, config.dataDir);
    if (target.dialect === 'sqlite' && target.file !== ':memory:') {
      candidates.push(dirname(target.file));
      if (!existsSync(target.file))
        candidates.push(...['', '-wal', '-shm', '-journal'].map((suffix) => target.file + suffix));
    }
  }
  const created = new Set<string>();
  for (const path of candidates) {
    let top: string | undefined;
    for (let p = resolve(path); !existsSync(p); p = dirname(p)) top = p;
    if (top !== undefined) created.add(top);
  }
  return [...created];
}

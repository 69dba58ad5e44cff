import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from './cli-process.js';
import { tempDir } from './host.js';

/**
 * A copy of the repository as a fresh clone has it — the files git tracks or would track (nothing
 * ignored: no `.data`, no `dist`) — with `node_modules` linked to this checkout's, as `npm ci` would
 * install it. Removed by the test cleanup.
 */
export function freshClone(): string {
  const dir = tempDir('a2ac-clone-');
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: REPO_ROOT,
  })
    .toString('utf8')
    .split('\0')
    .filter((f) => f !== '');
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    try {
      cpSync(join(REPO_ROOT, file), join(dir, file));
    } catch (error) {
      // A file deleted in the working tree but still tracked: a fresh clone of the next commit lacks it too.
      if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
    }
  }
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveHostConfig, type HostFlags } from './config.js';
import { pathsThisStartMayCreate, removeQuietly } from './start-paths.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'a2ac-start-'));
  dirs.push(dir);
  return dir;
}

function paths(flags: HostFlags): string[] {
  return pathsThisStartMayCreate(resolveHostConfig(flags, {}));
}

describe('pathsThisStartMayCreate', () => {
  it('names only the topmost missing directory of a new data directory', () => {
    const dataDir = join(tempDir(), 'data', 'nested');
    expect(paths({ 'data-dir': dataDir, 'tls-self-signed': true })).toEqual([join(dataDir, '..')]);
  });

  it('names the SQLite file and its companions when the directory exists but the file does not', () => {
    const dataDir = tempDir();
    const file = join(dataDir, 'host.sqlite');
    expect(paths({ 'data-dir': dataDir, db: `sqlite:${file}`, 'no-tls': true })).toEqual(
      ['', '-wal', '-shm', '-journal'].map((suffix) => file + suffix),
    );
  });

  it('names nothing that is already there', () => {
    const dataDir = tempDir();
    const file = join(dataDir, 'host.sqlite');
    writeFileSync(file, '');
    mkdirSync(join(dataDir, 'tls'));
    expect(paths({ 'data-dir': dataDir, db: `sqlite:${file}`, 'tls-self-signed': true })).toEqual([]);
  });

  it('names nothing for memory stores without TLS files', () => {
    expect(paths({ 'data-dir': join(tempDir(), 'unused'), db: 'memory', 'no-tls': true })).toEqual([]);
  });
});

describe('removeQuietly', () => {
  it('removes the paths and ignores those already gone', () => {
    const dir = join(tempDir(), 'made');
    mkdirSync(join(dir, 'inner'), { recursive: true });
    removeQuietly([dir, join(dir, 'never-there')]);
    expect(existsSync(dir)).toBe(false);
  });
});

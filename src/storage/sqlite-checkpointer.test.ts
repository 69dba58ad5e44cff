import { statSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, onCleanup, tempDir } from '../../test/helpers/host.js';
import { startCheckpointer } from './sqlite-checkpointer.js';

afterEach(cleanup);

describe('SQLite checkpoints on a worker thread (issue 10)', () => {
  it('copies the WAL into the database and restarts it once it passes the bound, while the writer goes on', async () => {
    const file = join(tempDir('acp-ckpt-'), 'c.sqlite');
    const db = new BetterSqlite3(file);
    onCleanup(() => void db.close());
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
    const errors: string[] = [];
    let restarted!: (frames: number) => void;
    const restart = new Promise<number>((resolve) => (restarted = resolve));
    const checkpointer = startCheckpointer(file, (message) => errors.push(message), { intervalMs: 5, restartFrames: 200, onRestart: (frames) => restarted(frames) });
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    for (let i = 0; i < 500; i++) insert.run('x'.repeat(4000));
    // ~1,000 frames written without a checkpoint on this connection (wal_autocheckpoint = 0).
    expect(await restart).toBeGreaterThan(200);
    await checkpointer.stop();
    expect(statSync(`${file}-wal`).size).toBe(0);
    expect(statSync(file).size).toBeGreaterThan(2 ** 20);
    expect(errors).toEqual([]);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 500 });
  });
});

describe('a lost checkpointer', () => {
  it('is reported, so the writer can checkpoint by itself again', async () => {
    const file = join(tempDir('acp-ckpt-lost-'), 'missing-dir', 'c.sqlite');
    let lost!: () => void;
    const reported = new Promise<void>((resolve) => (lost = resolve));
    const errors: string[] = [];
    // The worker cannot open a file in a folder that does not exist: it ends at once.
    const checkpointer = startCheckpointer(file, (message) => errors.push(message), { onLost: () => lost() });
    await reported;
    await checkpointer.stop();
    expect(errors.length).toBeGreaterThan(0);
  });
});

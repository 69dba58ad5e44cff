import { statSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, onCleanup, tempDir } from '../../../test/helpers/host.js';
import { startCheckpointer } from './sqlite-checkpointer.js';

afterEach(cleanup);

describe('SQLite checkpoints on a worker thread (docs/acpspec-core.md "Ingest path")', () => {
  it('copies every frame the writer committed into the database file, without the writer checkpointing', async () => {
    const file = join(tempDir('acp-ckpt-'), 'c.sqlite');
    const db = new BetterSqlite3(file);
    onCleanup(() => void db.close());
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    for (let i = 0; i < 500; i++) insert.run('x'.repeat(4000));
    const errors: string[] = [];
    let caughtUp!: (frames: number) => void;
    const copied = new Promise<number>((resolve) => (caughtUp = resolve));
    const checkpointer = startCheckpointer(file, (message) => errors.push(message), {
      intervalMs: 5,
      onCaughtUp: (frames) => caughtUp(frames),
    });
    // ~1,000 frames, none checkpointed by the writer (wal_autocheckpoint = 0).
    expect(await copied).toBeGreaterThan(900);
    await checkpointer.stop();
    expect(statSync(file).size).toBeGreaterThan(2 ** 20);
    expect(errors).toEqual([]);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 500 });
  });

  it('reports a worker that ended by itself', async () => {
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

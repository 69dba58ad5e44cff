import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { cleanup, tempDir } from '../helpers/cleanup.js';
import {
  DAY,
  migratedDatabase,
  RETENTION_VARIANTS,
  rowCounts,
  seedFinishedTasks,
  seedSdkTask,
  seedSession,
} from '../helpers/retention.js';

afterEach(cleanup);

function capture(env: Record<string, string> = {}): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (t) => void stdout.push(t), err: (t) => void stderr.push(t), env, stdout, stderr };
}

/** A database with ended work of every kind, 8 days old (past the default 7 days), plus a 2-day-old task. */
async function seeded(url: string): Promise<void> {
  const database = await migratedDatabase(url);
  const old = Date.now() - 8 * DAY;
  await seedFinishedTasks(database, { prefix: 'old', count: 4, chunks: 2, at: old });
  await seedFinishedTasks(database, { prefix: 'young', count: 1, chunks: 0, at: Date.now() - 2 * DAY });
  await seedSession(database, { id: 's', phase: 'canceled', at: old });
  await seedSdkTask(database, { id: 'a', state: 'TASK_STATE_COMPLETED', at: old, configs: 1 });
  await database.close();
}

describe.each(RETENTION_VARIANTS)('a2a-commerce prune on $name', ({ url: newUrl }) => {
  it('--dry-run shows per table what would go and changes nothing', async () => {
    const url = await newUrl();
    await seeded(url);
    const before = await rowCounts(await migratedDatabase(url));
    const io = capture();
    expect(await runCli(['prune', '--dry-run', '--db', url], io)).toBe(0);
    expect(io.stdout[0]).toMatch(/^dry run on .*: nothing is changed$/);
    expect(io.stdout.slice(1)).toEqual([
      expect.stringMatching(/^ {2}acmp_tasks +4 {2}results of finished ACMP tasks/),
      expect.stringMatching(/^ {2}acmp_task_chunks +8 {2}stream chunks/),
      expect.stringMatching(/^ {2}acmp_tasks +0 {2}ACMP task ids past their age$/),
      expect.stringMatching(/^ {2}acmp_sessions +1 {2}ended negotiation sessions$/),
      expect.stringMatching(/^ {2}tasks +1 {2}ended A2A tasks$/),
      expect.stringMatching(/^ {2}push_notification_configs +1 {2}push-notification configs/),
      '15 row(s) would go',
    ]);
    expect(await rowCounts(await migratedDatabase(url))).toEqual(before);
  });

  it('prunes in batches and reports what it removed; --older-than reaches younger work', async () => {
    const url = await newUrl();
    await seeded(url);
    const io = capture({ A2AC_PRUNE_BATCH: '3', A2AC_PRUNE_PAUSE: '0ms' });
    expect(await runCli(['prune', '--db', url], io)).toBe(0);
    expect(io.stdout.at(-1)).toBe('15 row(s) removed');
    const again = capture();
    expect(await runCli(['prune', '--db', url, '--older-than', '1d'], again)).toBe(0);
    expect(again.stdout[1]).toMatch(/^ {2}acmp_tasks +1 {2}results/);
    const counts = await rowCounts(await migratedDatabase(url));
    expect([counts.acmp_task_chunks, counts.acmp_sessions, counts.tasks]).toEqual([0, 0, 0]);
  });
});

describe('a2a-commerce prune refuses bad input with a coded error', () => {
  it.each([
    [['--older-than', '7x'], /^error \(CONFIG_INVALID\): --older-than must be a duration like 7d/],
    [['--older-than', '10m'], /^error \(CONFIG_INVALID\): --older-than must be between 1h and 3650d/],
  ])('%j', async (args, message) => {
    const url = `sqlite:${tempDir()}/x.sqlite`;
    const io = capture();
    expect(await runCli(['prune', '--db', url, ...args], io)).toBe(1);
    expect(io.stderr[0]).toMatch(message);
  });

  it('a bad retention variable is named', async () => {
    const io = capture({ A2AC_PRUNE_BATCH: 'lots' });
    expect(await runCli(['prune', '--db', `sqlite:${tempDir()}/x.sqlite`], io)).toBe(1);
    expect(io.stderr[0]).toMatch(/^error \(CONFIG_INVALID\): --prune-batch must be a whole number/);
  });

  it('a SQLite file that does not exist is an error, not a new empty database', async () => {
    const file = `${tempDir()}/missing.sqlite`;
    const io = capture();
    expect(await runCli(['prune', '--db', `sqlite:${file}`], io)).toBe(1);
    expect(io.stderr[0]).toBe(
      `error (CONFIG_INVALID): no SQLite database at ${file}: check --db or --data-dir`,
    );
    expect(existsSync(file)).toBe(false);
  });

  it('memory stores and stray arguments are usage errors', async () => {
    const io = capture();
    expect(await runCli(['prune', '--db', 'memory'], io)).toBe(2);
    expect(await runCli(['prune', 'now'], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(
      /memory stores keep nothing to prune[\s\S]*unexpected argument "now"/,
    );
  });

  it('serve refuses a bad retention flag before it starts, naming the flag', async () => {
    const io = capture();
    expect(await runCli(['serve', '--no-tls', '--data-dir', tempDir(), '--retain-sessions', '5x'], io)).toBe(
      1,
    );
    expect(io.stderr[0]).toMatch(/^error \(CONFIG_INVALID\): --retain-sessions must be a duration/);
  });

  it("lists the retention flags in serve's usage", async () => {
    const io = capture();
    expect(await runCli(['serve', '--help'], io)).toBe(0);
    expect(io.stdout.join('\n')).toMatch(/--retain-tasks <age>[\s\S]*A2AC_PRUNE_PAUSE/);
  });
});

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Kysely } from 'kysely';
import {
  DatabasePushNotificationStore,
  DatabaseTaskStore,
  PUSH_NOTIFICATION_TABLE,
  TASK_TABLE,
} from '@a2a-js/sdk/server/database';
import {
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  type PushNotificationStore,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { LocalError } from '../shared/errors.js';
import { callerIdentity } from './caller.js';

/** The SDK's task and push-notification stores over one database, or in memory. */
export interface SdkStores {
  taskStore: TaskStore;
  pushStore: PushNotificationStore;
}

/**
 * The SDK's stores, each scoped by {@link callerIdentity} (rather than the SDK's default resolver, whose
 * fallback for a caller without a name is `unknown`), so every table agrees on who owns a row.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function createSdkStores(db: Kysely<any> | undefined): SdkStores {
  const ownerResolver = callerIdentity;
  if (!db)
    return {
      taskStore: new InMemoryTaskStore(ownerResolver),
      pushStore: new InMemoryPushNotificationStore(ownerResolver),
    };
  return {
    taskStore: new DatabaseTaskStore(db, { ownerResolver }),
    pushStore: new DatabasePushNotificationStore(db, { ownerResolver }),
  };
}

/** The SDK's owner-scoped tables (its default names) and their owner column, for migrations and `reassign`. */
export const SDK_OWNER_COLUMNS: readonly { table: string; column: string }[] = [
  { table: TASK_TABLE, column: 'owner' },
  { table: PUSH_NOTIFICATION_TABLE, column: 'owner' },
];

type SdkMigrationRun = (
  argv: string[],
  env: NodeJS.ProcessEnv,
  output: { log(...a: unknown[]): void; error(...a: unknown[]): void },
) => Promise<number>;

async function sdkMigrationCli(): Promise<{ run: SdkMigrationRun }> {
  const entry = createRequire(import.meta.url).resolve('@a2a-js/sdk');
  const runUrl = pathToFileURL(join(dirname(entry), 'cli', 'run.js')).href;
  return (await import(runUrl)) as { run: SdkMigrationRun };
}

/** Runs one `a2a-db` command; returns its exit code, what it logged, and its errors as text. */
async function runSdkMigrationCli(
  argv: string[],
): Promise<{ code: number; lines: string[]; errors: string[] }> {
  const { run } = await sdkMigrationCli();
  const lines: string[] = [];
  const errors: string[] = [];
  const text = (args: unknown[]): string =>
    args.map((a) => (a instanceof Error ? a.message : String(a))).join(' ');
  const output = {
    log: (...args: unknown[]) => lines.push(text(args)),
    error: (...args: unknown[]) => errors.push(text(args)),
  };
  const code = await run(argv, {}, output);
  return { code, lines, errors };
}

/**
 * Applies the SDK's own schema migrations (its `a2a-db upgrade`) to the database at `url`, so the task
 * and push-notification tables are exactly the ones the SDK's stores expect. The SDK ships them only
 * through its CLI module, which its package exports do not list; we load that module by file URL next to
 * the SDK's resolved entry point (pinned by the lockfile) rather than copying its DDL.
 * @throws LocalError `CONFIG_INVALID` when the migration fails, with the SDK's reason in the message.
 */
export async function migrateSdkStores(url: string): Promise<void> {
  const { code, errors } = await runSdkMigrationCli(['upgrade', '--url', url]);
  if (code !== 0) {
    const reason = errors.join('; ') || 'no reason given';
    throw new LocalError('CONFIG_INVALID', `SDK store migration failed: ${reason}`, {
      cause: new Error(reason),
    });
  }
}

/**
 * The SDK store migrations not yet applied to the database at `url` (from its `a2a-db status`), as
 * `sdk:<store>/<migration>`.
 * @throws LocalError `CONFIG_INVALID` when the status cannot be read, with the SDK's reason.
 */
export async function pendingSdkStoreMigrations(url: string): Promise<string[]> {
  const { code, lines, errors } = await runSdkMigrationCli(['status', '--url', url]);
  if (code !== 0)
    throw new LocalError(
      'CONFIG_INVALID',
      `cannot read the SDK store migration status: ${errors.join('; ')}`,
    );
  // `a2a-db status` prints each store id, then one indented line per migration: `  <name>  pending`.
  const pending: string[] = [];
  let store = '';
  for (const line of lines.flatMap((l) => l.split('\n'))) {
    const migration = /^\s+(\S+)\s+(applied|pending)\b/.exec(line);
    if (!migration) store = line.trim();
    else if (migration[2] === 'pending') pending.push(`sdk:${store}/${migration[1]}`);
  }
  return pending;
}

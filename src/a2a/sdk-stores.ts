import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Kysely } from 'kysely';
import { DatabasePushNotificationStore, DatabaseTaskStore, PUSH_NOTIFICATION_TABLE, TASK_TABLE } from '@a2a-js/sdk/server/database';
import { InMemoryPushNotificationStore, InMemoryTaskStore, type PushNotificationStore, type TaskStore } from '@a2a-js/sdk/server';
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
  if (!db) return { taskStore: new InMemoryTaskStore(ownerResolver), pushStore: new InMemoryPushNotificationStore(ownerResolver) };
  return { taskStore: new DatabaseTaskStore(db, { ownerResolver }), pushStore: new DatabasePushNotificationStore(db, { ownerResolver }) };
}

/** The SDK's owner-scoped tables (its default names) and their owner column, for migrations and `reassign`. */
export const SDK_OWNER_COLUMNS: readonly { table: string; column: string }[] = [
  { table: TASK_TABLE, column: 'owner' },
  { table: PUSH_NOTIFICATION_TABLE, column: 'owner' },
];

type SdkMigrationRun = (argv: string[], env: NodeJS.ProcessEnv, output: { log(...a: unknown[]): void; error(...a: unknown[]): void }) => Promise<number>;

/**
 * Applies the SDK's own schema migrations (its `a2a-db upgrade`) to the database at `url`, so the task
 * and push-notification tables are exactly the ones the SDK's stores expect. The SDK ships them only
 * through its CLI module, which its package exports do not list; we load that module by file URL next to
 * the SDK's resolved entry point (pinned by the lockfile) rather than copying its DDL.
 * @throws LocalError `CONFIG_INVALID` when the migration fails (the SDK's message is in `cause`).
 */
export async function migrateSdkStores(url: string): Promise<void> {
  const entry = createRequire(import.meta.url).resolve('@a2a-js/sdk');
  const runUrl = pathToFileURL(join(dirname(entry), 'cli', 'run.js')).href;
  const runModule = (await import(runUrl)) as { run: SdkMigrationRun };
  const errors: string[] = [];
  const output = { log: () => {}, error: (...args: unknown[]) => errors.push(args.map(String).join(' ')) };
  const code = await runModule.run(['upgrade', '--url', url], {}, output);
  if (code !== 0) throw new LocalError('CONFIG_INVALID', 'SDK store migration failed', { cause: new Error(errors.join('\n')) });
}

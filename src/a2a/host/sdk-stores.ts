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
import { callerIdentity } from '../caller.js';

/** The SDK's task and push-notification stores over one database, or in memory. */
export interface SdkStores {
  taskStore: TaskStore;
  pushStore: PushNotificationStore;
}

/**
 * The SDK's stores, each scoped by {@link callerIdentity} (rather than the SDK's default resolver, whose
 * fallback for a caller without a name is `unknown`), so every table agrees on who owns a row. The SDK's
 * stores take a Kysely instance of any table types (they name their own tables), so `db` is the host's
 * shared instance as it is typed there (`SqlKysely`, src/storage/sql/query.ts).
 */
export function createSdkStores<DB>(db: Kysely<DB> | undefined): SdkStores {
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

/**
 * The SDK stores' table names (its exported constants), for our migrations of their schema
 * (src/storage/a2a/sdk-store-migrations.ts).
 */
export const SDK_STORE_TABLES = {
  tasks: TASK_TABLE,
  pushNotificationConfigs: PUSH_NOTIFICATION_TABLE,
} as const;

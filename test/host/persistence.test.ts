import { afterEach, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { createPlainTask } from '../helpers/a2a.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';

afterEach(cleanup);

async function createTask(url: string): Promise<string> {
  return createPlainTask(await createA2AClient(await fetchAgentCard(url)), 'remember me');
}

async function readTask(url: string, id: string) {
  const client = await createA2AClient(await fetchAgentCard(url), { transport: 'HTTP+JSON' });
  return client.getTask({ tenant: '', id });
}

describe('persistence across a restart', () => {
  it('GetTask returns a task created before a restart (SQLite, migrated on start)', async () => {
    const dataDir = tempDir();
    const first = await startTestHost({ dataDir });
    const id = await createTask(first.url);
    await first.close();
    const second = await startTestHost({ dataDir });
    const task = await readTask(second.url, id);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts).toHaveLength(1);
  });

  it.skipIf(!process.env.TEST_PG_URL)(
    'GetTask returns a task created before a restart (PostgreSQL)',
    async () => {
      const db = await freshPgDatabase();
      const first = await startTestHost({ flags: { db }, migrate: true });
      const id = await createTask(first.url);
      await first.close();
      const second = await startTestHost({ flags: { db } });
      const task = await readTask(second.url, id);
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    },
  );
});

import { afterEach, describe, expect, it } from 'vitest';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { createPlainTask } from '../helpers/a2a.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';

afterEach(cleanup);

/** Creating a config contacts nobody, so the webhook origin needs no listener. */
const HOOK = 'http://127.0.0.1:9';

function config(taskId: string, url: string) {
  return { tenant: '', id: 'cfg-1', taskId, url, token: 'webhook-token', authentication: undefined };
}

describe('push notifications (A2A §4.3) behind an allow-list', () => {
  it('are off by default: the card says so and the SDK refuses configs', async () => {
    const host = await startTestHost();
    const card = await fetchAgentCard(host.url);
    expect(card.capabilities?.pushNotifications).toBe(false);
  });

  it('refuses a webhook outside the allow-list', async () => {
    const host = await startTestHost({ flags: { 'push-allow': [HOOK] } });
    const client = await createA2AClient(await fetchAgentCard(host.url));
    const taskId = await createPlainTask(client);
    await expect(
      client.createTaskPushNotificationConfig(config(taskId, 'http://169.254.169.254/latest')),
    ).rejects.toThrow(/allow-list/);
  });

  it('stores configs in SQLite: a config created before a restart is read back after it', async () => {
    const dataDir = tempDir();
    const flags = { 'push-allow': [HOOK] };
    const first = await startTestHost({ flags, dataDir });
    const card = await fetchAgentCard(first.url);
    expect(card.capabilities?.pushNotifications).toBe(true);
    const client = await createA2AClient(card);
    const taskId = await createPlainTask(client);
    await client.createTaskPushNotificationConfig(config(taskId, `${HOOK}/hook`));
    await first.close();
    const second = await startTestHost({ flags, dataDir });
    const again = await createA2AClient(await fetchAgentCard(second.url));
    const stored = await again.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'cfg-1' });
    expect(stored.url).toBe(`${HOOK}/hook`);
  });
});

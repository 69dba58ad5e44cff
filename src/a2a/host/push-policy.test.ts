import { afterEach, describe, expect, it } from 'vitest';
import { Task, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { InMemoryPushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import { cleanup } from '../../../test/helpers/host.js';
import { startWebhook } from '../../../test/helpers/webhook.js';
import { AllowListPushSender, webhookAllowed } from './push-policy.js';

afterEach(cleanup);

const ALLOWED = ['https://hooks.example.com'];

describe('webhookAllowed', () => {
  it('allows any path at an allowed origin', () => {
    expect(webhookAllowed('https://hooks.example.com/a/b?c=d', ALLOWED)).toBe(true);
  });

  it('refuses other origins, schemes, ports, credentials and non-URLs', () => {
    for (const url of [
      'https://hooks.example.com.evil.test/',
      'http://hooks.example.com/',
      'https://hooks.example.com:8443/',
      'https://user:pw@hooks.example.com/',
      'file:///etc/passwd',
      'not a url',
    ]) {
      expect(webhookAllowed(url, ALLOWED)).toBe(false);
    }
  });
});

describe('AllowListPushSender', () => {
  const context = new ServerCallContext({ requestedVersion: '1.0' });
  const task = Task.fromJSON({ id: 'task-1', contextId: 'ctx-1', status: { state: 'TASK_STATE_WORKING' } });
  const event: StreamResponse = { payload: { $case: 'task', value: task } };

  async function storeWith(...urls: string[]) {
    const store = new InMemoryPushNotificationStore();
    for (const [i, url] of urls.entries()) {
      await store.save(task.id, context, {
        tenant: '',
        id: `cfg-${i}`,
        taskId: task.id,
        url,
        token: 't',
        authentication: undefined,
      });
    }
    return store;
  }

  it('checks every stored config again at delivery: one stored before its origin left the list gets nothing', async () => {
    const kept = await startWebhook();
    const dropped = await startWebhook();
    const sender = new AllowListPushSender(await storeWith(kept.url, dropped.url), [kept.origin]);
    await sender.send(event, context, task);
    expect(kept.posts).toHaveLength(1);
    expect(dropped.posts).toHaveLength(0);
    expect(JSON.parse(kept.posts[0]!.body)).toMatchObject({
      task: { id: 'task-1', status: { state: TaskState[TaskState.TASK_STATE_WORKING] } },
    });
  });

  it('does not follow a redirect, even to an origin on the list', async () => {
    const target = await startWebhook();
    const redirecting = await startWebhook((res) => res.writeHead(308, { location: target.url }).end());
    const sender = new AllowListPushSender(await storeWith(redirecting.url), [
      redirecting.origin,
      target.origin,
    ]);
    await sender.send(event, context, task);
    expect(redirecting.posts).toHaveLength(1);
    expect(target.posts).toHaveLength(0);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { ESCROW_METHOD as M } from '../../src/acmp/escrow/constants.js';
import { cleanup } from '../helpers/host.js';
import { startWebhook } from '../helpers/webhook.js';
import { escrowHost, escrowWithPushHook, secret } from './helpers.js';

afterEach(cleanup);

describe('push notifications for an escrow task (A2A §4.3, design §4.6)', () => {
  it('delivers the claim to the webhook the buyer registered on its escrow, and nothing to a stranger', async () => {
    const hook = await startWebhook();
    const agent = await escrowHost({ pushAllow: [hook.origin] });
    await agent.credit('agent:buyer', '1');
    const escrowId = await escrowWithPushHook(agent, hook.url);
    const card = await fetchAgentCard(agent.host.url);
    const stranger = await createA2AClient(card, { token: secret('mallory') });
    await expect(
      stranger.createTaskPushNotificationConfig({
        tenant: '',
        id: 'x',
        taskId: escrowId,
        url: hook.url,
        token: 't',
        authentication: undefined,
      }),
    ).rejects.toThrow(/not found/i);

    await (
      await agent.client('provider')
    ).call(M.claim, { op_ref: 'c', escrow_id: escrowId, amount_cu: 0.002, task_id: 'task_1', proof: {} });
    const [post] = await hook.received(1);
    expect(post!.headers['x-a2a-notification-token']).toBe('hook-token');
    const body = JSON.parse(post!.body) as Record<string, unknown>;
    expect(JSON.stringify(body)).toContain(escrowId);
    expect(JSON.stringify(body)).toContain('"claimed"');
    expect(JSON.stringify(body)).toContain('window_ends_ms');
  });
});

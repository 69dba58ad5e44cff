import { afterEach, describe, expect, it } from 'vitest';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { cleanup, postJson } from '../helpers/host.js';
import { ACTIVATED, acmpHost, acmpMessage, invokeRoot, jsonRpcUrl, rpc, type RpcBody } from './helpers.js';

afterEach(cleanup);

async function send(
  host: { url: string },
  message: unknown,
  configuration: Record<string, unknown>,
): Promise<RpcBody> {
  return (await postJson(jsonRpcUrl(host), rpc('SendMessage', { message, configuration }), ACTIVATED))
    .body as RpcBody;
}

describe('SendMessageConfiguration on ACMP invokes (A2A §3.2.2, §3.2.4)', () => {
  it('returnImmediately answers with the working task; the invoke still runs to completion', async () => {
    const host = await acmpHost({ heartbeatIntervalMs: 50 });
    const root = invokeRoot({
      capability: 'slow-count',
      input: { type: 'json', data: { n: 40 } },
      max_price_cu: 1,
    });
    const body = await send(host, acmpMessage(root), { returnImmediately: true });
    const taskId = String(root.params.task_id);
    expect(body.result?.task?.id).toBe(taskId);
    expect(body.result?.task?.status.state).toBe('TASK_STATE_WORKING');
    // Follow it to the end with SubscribeToTask (events, not polling), then read it back.
    const client = await createA2AClient(await fetchAgentCard(host.url));
    for await (const _ of client.resubscribeTask({ tenant: '', id: taskId }));
    const got = (await postJson(jsonRpcUrl(host), rpc('GetTask', { id: taskId }), ACTIVATED)).body as RpcBody;
    expect(got.result?.status?.state).toBe('TASK_STATE_COMPLETED');
  });

  it('historyLength 0 returns the finished task without history; 1 keeps the result message', async () => {
    const host = await acmpHost();
    const none = await send(host, acmpMessage(invokeRoot()), { historyLength: 0 });
    expect(none.result?.task?.history ?? []).toHaveLength(0);
    expect(none.result?.task?.status.message?.parts[0]?.data).toHaveProperty('acmp_result');
    const one = await send(host, acmpMessage(invokeRoot()), { historyLength: 1 });
    expect(one.result?.task?.history).toHaveLength(1);
    expect(one.result?.task?.history?.[0]?.parts[0]?.data).toHaveProperty('acmp_result');
  });
});

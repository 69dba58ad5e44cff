import { afterEach, describe, expect, it } from 'vitest';
import { acmpRootOf } from '../../src/a2a/acmp-part.js';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { Role } from '@a2a-js/sdk';
import { tickerCapability } from '../acmp/helpers.js';
import { cleanup } from '../helpers/host.js';
import { acmpHost, httpClient, invoke, newTaskId, notified, rpcError } from './helpers.js';

afterEach(cleanup);

/**
 * The A2A view of a task an agent started over MCP (docs/acmp-mcp-binding.md §5): the same record, so the
 * same Task as if it had been started over A2A — history begins with the invoke, and a subscriber joins a
 * streamed invoke with its chunks.
 */
describe('the A2A Task of an ACMP invoke received over MCP', () => {
  it('has the invoke as a user message with the same acmp/invoke root as history[0], then the outcome', async () => {
    const host = await acmpHost();
    const rec = await httpClient(host, 'modern');
    const params = {
      task_id: newTaskId(),
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'Margins improved.' },
      max_price_cu: 0.005,
      vendor_field: { kept: true },
    };
    await invoke(rec.client, params);
    const client = await createA2AClient(await fetchAgentCard(host.url));
    const task = await client.getTask({ tenant: '', id: params.task_id, historyLength: undefined });
    const [first, last, ...rest] = task.history;
    expect(rest).toEqual([]);
    expect(first).toMatchObject({ role: Role.ROLE_USER, taskId: params.task_id, contextId: task.contextId });
    expect(first?.messageId).not.toBe('');
    expect(acmpRootOf(first)).toEqual({ kind: 'request', method: 'acmp/invoke', params });
    expect(acmpRootOf(last)).toMatchObject({ kind: 'result', result: { task_id: params.task_id } });
    // Every read agrees: the invoke message's id is derived from the task.
    const again = await client.getTask({ tenant: '', id: params.task_id, historyLength: undefined });
    expect(again.history[0]?.messageId).toBe(first?.messageId);
  });

  it('is joined by SubscribeToTask with its chunks when it was asked with stream: true', async () => {
    const host = await acmpHost({ capabilities: [tickerCapability('ticker', 20)] });
    const rec = await httpClient(host, 'modern');
    const taskId = newTaskId();
    const running = rpcError(
      invoke(rec.client, {
        task_id: taskId,
        capability: 'ticker',
        input: { type: 'text', data: '' },
        stream: true,
      }),
    );
    await notified(rec, (n) => n.method === 'acmp/streamChunk');
    const client = await createA2AClient(await fetchAgentCard(host.url));
    const seqs: unknown[] = [];
    for await (const event of client.resubscribeTask({ tenant: '', id: taskId })) {
      const payload = event.payload;
      if (payload?.$case !== 'statusUpdate') continue;
      const root = acmpRootOf(payload.value.status?.message);
      if (root?.kind === 'request' && root.method === 'acmp/streamChunk') seqs.push(root.params.seq);
      if (seqs.length === 3) break;
    }
    expect(seqs).toEqual([0, 1, 2]);
    await rec.client.notification({ method: 'acmp/cancel', params: { task_id: taskId } });
    expect((await running).code).toBe(-33004);
  });
});

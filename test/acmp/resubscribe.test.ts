import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { acmpRootOf } from '../../src/a2a/acmp-part.js';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { taskStateName } from '../../src/a2a/part-codec.js';
import { cleanup } from '../helpers/host.js';
import { A2A_TRANSPORTS, clientTransport } from '../helpers/transports.js';
import { acmpHost, buyerOptions, newTaskId } from './helpers.js';

afterEach(cleanup);

describe.each(A2A_TRANSPORTS)('over %s', (transport) => {
  describe('SubscribeToTask on a running ACMP task (A2A §3.1.6, Layer 1 §3.1.1 join)', () => {
    it('delivers the live heartbeats and the final acmp_result to a subscriber', async () => {
      const host = await acmpHost({ transport });
      const buyer = await createAcmpBuyer(buyerOptions(host));
      const taskId = newTaskId();
      const run = buyer.stream({
        task_id: taskId,
        capability: 'slow-count',
        input: { type: 'json', data: { n: 80 } },
        max_price_cu: 1,
      });
      const iterator = run[Symbol.asyncIterator]();
      expect((await iterator.next()).value).toMatchObject({ kind: 'heartbeat' });
      // The buyer keeps reading its own stream meanwhile (its liveness window counts from the last event read).
      const buyerDone = (async () => {
        for (let step = await iterator.next(); !step.done; step = await iterator.next());
      })();

      const client = await createA2AClient(await fetchAgentCard(host.url), {
        transport: clientTransport(transport),
      });
      const seen: string[] = [];
      let last: ReturnType<typeof acmpRootOf>;
      for await (const event of client.resubscribeTask({ tenant: '', id: taskId })) {
        const payload = event.payload;
        if (payload?.$case === 'task') seen.push(`task:${taskStateName(payload.value.status?.state)}`);
        if (payload?.$case === 'statusUpdate') {
          const root = acmpRootOf(payload.value.status?.message);
          seen.push(root?.kind === 'request' ? root.method : (root?.kind ?? 'none'));
          last = root;
        }
      }
      expect(seen[0]).toBe('task:working');
      expect(seen).toContain('acmp/heartbeat');
      expect(last).toMatchObject({ kind: 'result', result: { task_id: taskId } });
      await buyerDone;
    });

    it('leaves a finished ACMP task to the SDK, which refuses a terminal task', async () => {
      const host = await acmpHost({ transport });
      const buyer = await createAcmpBuyer(buyerOptions(host));
      const taskId = newTaskId();
      await buyer.invoke({
        task_id: taskId,
        capability: 'sentiment-analysis',
        input: { type: 'text', data: 'fine' },
        max_price_cu: 0.005,
      });
      const client = await createA2AClient(await fetchAgentCard(host.url), {
        transport: clientTransport(transport),
      });
      await expect(async () => {
        for await (const _ of client.resubscribeTask({ tenant: '', id: taskId }));
      }).rejects.toThrow(/terminal/);
    });
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { isCompleted, taskStateName } from '../../src/a2a/part-codec.js';
import { acmpRootOf } from '../../src/a2a/acmp-part.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { newTaskId } from './helpers.js';

afterEach(cleanup);

/** Two hosts on one PostgreSQL: the store decides, in-process maps are only caches. */
describe.skipIf(!process.env.TEST_PG_URL)('several hosts on one PostgreSQL', () => {
  async function twoHosts() {
    const db = await freshPgDatabase();
    // These tests are about the store deciding across hosts, not about liveness: a 1 s heartbeat keeps the
    // buyer's window (3 ×) clear of a loaded machine's claim latency (a capped claim is a transaction).
    const modules = () => [
      acmpModule({ capabilities: demoCapabilities({ stepMs: 50 }), heartbeatIntervalMs: 1000 }),
    ];
    const a = await startTestHost({ flags: { db }, modules: modules(), migrate: true });
    const b = await startTestHost({ flags: { db }, modules: modules() });
    return { a, b };
  }

  it('A2A CancelTask on host B stops a task running on host A and leaves it canceled with -33004', async () => {
    const { a, b } = await twoHosts();
    const buyer = await createAcmpBuyer({ agentUrl: a.url });
    const taskId = newTaskId();
    const events = buyer.stream({
      task_id: taskId,
      capability: 'slow-count',
      input: { type: 'json', data: { n: 200 } },
      max_price_cu: 1,
    });
    const iterator = events[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ kind: 'heartbeat' });
    const clientB = await createA2AClient(await fetchAgentCard(b.url));
    const cancelled = await clientB.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    expect(taskStateName(cancelled.status?.state)).toBe('canceled');
    expect(acmpRootOf(cancelled.status?.message)).toMatchObject({ kind: 'error', error: { code: -33004 } });
    await expect(async () => {
      for (let step = await iterator.next(); !step.done; step = await iterator.next());
    }).rejects.toMatchObject({ code: -33004 });
  });

  it('a duplicate invoke on host B of a task finished on host A gets the stored result without running again', async () => {
    const { a, b } = await twoHosts();
    const taskId = newTaskId();
    const params = {
      task_id: taskId,
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'Great quarter.' },
      max_price_cu: 0.005,
    };
    const first = await (await createAcmpBuyer({ agentUrl: a.url })).invoke(params);
    const again = await (await createAcmpBuyer({ agentUrl: b.url })).invoke(params);
    expect(again).toEqual(first);
    const task = await (
      await createA2AClient(await fetchAgentCard(b.url))
    ).getTask({ tenant: '', id: taskId });
    expect(isCompleted(task.status?.state)).toBe(true);
  });
});

describe.skipIf(!process.env.TEST_PG_URL)('caller scope across hosts', () => {
  it("refuses another caller's task_id while it runs on the other host", async () => {
    const db = await freshPgDatabase();
    const modules = () => [
      acmpModule({ capabilities: demoCapabilities({ stepMs: 50 }), heartbeatIntervalMs: 100 }),
    ];
    const tokens = ['caller-one-token-0123456789', 'caller-two-token-0123456789'];
    const a = await startTestHost({ flags: { db, token: tokens }, modules: modules(), migrate: true });
    const b = await startTestHost({ flags: { db, token: tokens }, modules: modules() });
    const taskId = newTaskId();
    const params = {
      task_id: taskId,
      capability: 'slow-count',
      input: { type: 'json', data: { n: 20 } },
      max_price_cu: 1,
    };
    const owner = (await createAcmpBuyer({ agentUrl: a.url, token: tokens[0] }))
      .stream(params)
      [Symbol.asyncIterator]();
    expect((await owner.next()).value).toMatchObject({ kind: 'heartbeat' });
    const intruder = await createAcmpBuyer({ agentUrl: b.url, token: tokens[1], retries: 0 });
    await expect(intruder.invoke(params)).rejects.toMatchObject({ code: -32602 });
    for (let s = await owner.next(); !s.done; s = await owner.next());
  });
});

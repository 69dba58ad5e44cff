import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import type { AcmpResult } from '../../src/acmp/wire/task-messages.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { cleanup, tempDir } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import {
  acmpHost,
  acmpMessage,
  countingCapability,
  invokeRoot,
  newTaskId,
  replyError,
  replyRoot,
  sendRaw,
  ACTIVATED,
} from './helpers.js';

afterEach(cleanup);

const TOKEN_A = 'buyer-a-token-0123456789';
const TOKEN_B = 'buyer-b-token-0123456789';

/** Headers of an authenticated caller that activated the ACMP extension. */
function asCaller(token: string): Record<string, string> {
  return { ...ACTIVATED, authorization: `Bearer ${token}` };
}

function countingInvoke(
  taskId?: string,
): Parameters<Awaited<ReturnType<typeof createAcmpBuyer>>['invoke']>[0] {
  return {
    ...(taskId ? { task_id: taskId } : {}),
    capability: 'count-runs',
    input: { type: 'text', data: 'once' },
    max_price_cu: 0.01,
    proof_method: 'result-hash',
  };
}

/** Runs one invoke, restarts the host on the same database, retries it: the second host never runs it. */
async function expectReplayAfterRestart(storage: {
  dataDir?: string;
  flags?: Record<string, string>;
  migrate?: boolean;
  heartbeatIntervalMs?: number;
}): Promise<void> {
  const first = countingCapability();
  const host1 = await acmpHost({ capabilities: [first], ...storage });
  const buyer1 = await createAcmpBuyer({ agentUrl: host1.url });
  const taskId = newTaskId();
  const original = await buyer1.invoke(countingInvoke(taskId));
  await host1.close();

  const second = countingCapability();
  const host2 = await acmpHost({ capabilities: [second], ...storage });
  const buyer2 = await createAcmpBuyer({ agentUrl: host2.url });
  const replayed = await buyer2.invoke(countingInvoke(taskId));
  expect(first.runs()).toBe(1);
  expect(second.runs()).toBe(0);
  expect(canonicalJson(replayed)).toBe(canonicalJson(original));
}

describe('idempotency over A2A (Layer 1 §3.1.1)', () => {
  // A host per test: each counts the runs of a capability of its own, or restarts on one database.
  it('runs 200 concurrent duplicates of one invoke exactly once; all get the same result', async () => {
    const capability = countingCapability('count-runs', 50);
    // A liveness window (3 × interval) that 200 connections opening at once on a small machine cannot miss.
    const host = await acmpHost({ capabilities: [capability], heartbeatIntervalMs: 2000 });
    const buyer = await createAcmpBuyer({ agentUrl: host.url, retries: 0 });
    const taskId = newTaskId();
    const results = await Promise.all(
      Array.from({ length: 200 }, () => buyer.invoke(countingInvoke(taskId))),
    );
    expect(capability.runs()).toBe(1);
    const distinct = new Set(results.map((r: AcmpResult) => canonicalJson(r)));
    expect(distinct.size).toBe(1);
    expect(results[0]?.output).toEqual({ type: 'json', data: { echo: 'once', run: 1 } });
  });

  it('answers a duplicate of a finished task with the stored result, without running again', async () => {
    const capability = countingCapability();
    const host = await acmpHost({ capabilities: [capability] });
    const root = invokeRoot({
      capability: 'count-runs',
      input: { type: 'text', data: 'once' },
      max_price_cu: 0.01,
    });
    const first = replyRoot(await sendRaw(host, acmpMessage(root)));
    const again = await sendRaw(host, acmpMessage(root));
    expect(replyRoot(again)).toEqual(first);
    expect(again.result?.task?.history).toHaveLength(2);
    expect(capability.runs()).toBe(1);
  });

  it('answers a streaming retry of a finished task with the stored chunks and result', async () => {
    const capability = countingCapability();
    const host = await acmpHost({ capabilities: [capability] });
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    const taskId = newTaskId();
    const plain = await buyer.invoke(countingInvoke(taskId));
    const streamed = await buyer.invoke({ ...countingInvoke(taskId), stream: true });
    expect(streamed.output).toEqual(plain.output);
    expect(streamed.proof).toEqual(plain.proof);
    expect(capability.runs()).toBe(1);
  });

  it('refuses the same task_id with different params (-32602), running nothing', async () => {
    const capability = countingCapability();
    const host = await acmpHost({ capabilities: [capability] });
    const root = invokeRoot({
      capability: 'count-runs',
      input: { type: 'text', data: 'once' },
      max_price_cu: 0.01,
    });
    await sendRaw(host, acmpMessage(root));
    const other = { ...root, params: { ...root.params, input: { type: 'text', data: 'twice' } } };
    const refused = await sendRaw(host, acmpMessage(other));
    expect(replyError(refused)?.code).toBe(-32602);
    expect(refused.result?.task).toBeUndefined();
    expect(capability.runs()).toBe(1);
    // The stored task is untouched: a plain retry still gets the original result.
    const again = await sendRaw(host, acmpMessage(root));
    expect(again.result?.task?.history).toHaveLength(2);
    expect(replyRoot(again)?.acmp_result).toMatchObject({ output: { data: { echo: 'once' } } });
  });

  it('replays after a restart on the same SQLite data directory', async () => {
    await expectReplayAfterRestart({ dataDir: tempDir() });
  });

  it.skipIf(!process.env.TEST_PG_URL)('replays after a restart on the same PostgreSQL database', async () => {
    // A first PostgreSQL connection may take longer than a 300 ms liveness window.
    await expectReplayAfterRestart({
      dataDir: tempDir(),
      flags: { db: await freshPgDatabase() },
      migrate: true,
      heartbeatIntervalMs: 1000,
    });
  });

  it.skipIf(!process.env.TEST_PG_URL)(
    'runs concurrent duplicates on two hosts sharing PostgreSQL once',
    async () => {
      const db = await freshPgDatabase();
      const a = countingCapability('count-runs', 300);
      const b = countingCapability('count-runs', 300);
      const hostA = await acmpHost({
        capabilities: [a],
        flags: { db },
        migrate: true,
        fallbackReadMs: 20,
        heartbeatIntervalMs: 1000,
      });
      const hostB = await acmpHost({
        capabilities: [b],
        flags: { db },
        fallbackReadMs: 20,
        heartbeatIntervalMs: 1000,
      });
      const [buyerA, buyerB] = await Promise.all([
        createAcmpBuyer({ agentUrl: hostA.url }),
        createAcmpBuyer({ agentUrl: hostB.url }),
      ]);
      const taskId = newTaskId();
      const results = await Promise.all([
        buyerA.invoke(countingInvoke(taskId)),
        buyerB.invoke(countingInvoke(taskId)),
      ]);
      expect(a.runs() + b.runs()).toBe(1);
      expect(canonicalJson(results[0])).toBe(canonicalJson(results[1]));
    },
  );
});

describe('task ids across callers (docs/acmp-a2a-binding.md "Security")', () => {
  // A host per test: each counts the runs of a capability of its own (and waits for its first start).
  it('refuses a finished task_id used by another authenticated caller, without replaying its result', async () => {
    const capability = countingCapability();
    const host = await acmpHost({ capabilities: [capability], flags: { token: [TOKEN_A, TOKEN_B] } });
    const root = invokeRoot({
      capability: 'count-runs',
      input: { type: 'text', data: 'mine' },
      max_price_cu: 0.01,
    });
    expect(replyRoot(await sendRaw(host, acmpMessage(root), asCaller(TOKEN_A)))?.acmp_result).toBeDefined();
    const stolen = await sendRaw(host, acmpMessage(root), asCaller(TOKEN_B));
    expect(replyError(stolen)?.code).toBe(-32602);
    expect(JSON.stringify(stolen)).not.toContain('"echo"');
    expect(capability.runs()).toBe(1);
  });

  it('refuses an in-flight task_id used by another authenticated caller', async () => {
    const capability = countingCapability('count-runs', 400);
    const host = await acmpHost({ capabilities: [capability], flags: { token: [TOKEN_A, TOKEN_B] } });
    const root = invokeRoot({
      capability: 'count-runs',
      input: { type: 'text', data: 'mine' },
      max_price_cu: 0.01,
    });
    const own = sendRaw(host, acmpMessage(root), asCaller(TOKEN_A));
    await capability.started;
    const stolen = await sendRaw(host, acmpMessage(root), asCaller(TOKEN_B));
    expect(replyError(stolen)?.code).toBe(-32602);
    expect(replyRoot(await own)?.acmp_result).toBeDefined();
    expect(capability.runs()).toBe(1);
  });

  it("refuses an acmp/cancel from another caller and lets the owner's task finish", async () => {
    const capability = countingCapability('count-runs', 300);
    const host = await acmpHost({ capabilities: [capability], flags: { token: [TOKEN_A, TOKEN_B] } });
    const root = invokeRoot({
      capability: 'count-runs',
      input: { type: 'text', data: 'mine' },
      max_price_cu: 0.01,
    });
    const own = sendRaw(host, acmpMessage(root), asCaller(TOKEN_A));
    await capability.started;
    const cancel = await sendRaw(
      host,
      acmpMessage({ acmp_method: 'acmp/cancel', params: { task_id: root.params.task_id } }),
      asCaller(TOKEN_B),
    );
    expect(replyError(cancel)?.code).toBe(-32602);
    expect(replyRoot(await own)?.acmp_result).toBeDefined();
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import { connectMcpAcmpBuyer } from '../../src/mcp/buyer.js';
import { countingCapability } from '../acmp/helpers.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, onCleanup } from '../helpers/host.js';
import {
  acmpHost,
  ALICE,
  BOB,
  ERAS,
  httpClient,
  invoke,
  mcpUrl,
  newTaskId,
  notified,
  rpcError,
  sentiment,
  TOKEN_FLAGS,
} from './helpers.js';

afterEach(cleanup);

// The tests of the demo capabilities share one host with named tokens (fresh task ids, their own buyers);
// a test with a counting capability keeps a host of its own, as the capability counts every execution.
const tokenHost = shared(() => acmpHost({ flags: TOKEN_FLAGS }));

/** Invoke input of the counting capability (it echoes the input and counts its executions). */
function counted(
  taskId: string,
  extra: Record<string, unknown> = {},
): { task_id: string; capability: string; input: { type: string; data: string }; max_price_cu: number } {
  return {
    task_id: taskId,
    capability: 'count-runs',
    input: { type: 'text', data: 'once' },
    max_price_cu: 0.01,
    ...extra,
  };
}

async function a2aBuyer(host: { url: string }, token: string): ReturnType<typeof createAcmpBuyer> {
  return createAcmpBuyer({ agentUrl: host.url, token, retries: 0 });
}

async function mcpBuyer(host: { url: string }, token: string): ReturnType<typeof connectMcpAcmpBuyer> {
  const buyer = await connectMcpAcmpBuyer({ endpoint: { url: mcpUrl(host) }, token, retries: 0 });
  onCleanup(() => buyer.close());
  return buyer;
}

describe('one task model across bindings (Layer 1 §3.1.1, docs/acmp-mcp-binding.md §5)', () => {
  it.each(ERAS)(
    'replays over A2A an invoke finished over MCP (%s) by the same agent, without running it again',
    async (era) => {
      const counter = countingCapability();
      const host = await acmpHost({ capabilities: [counter], flags: TOKEN_FLAGS });
      const { client } = await httpClient(host, era, ALICE);
      const taskId = newTaskId();
      const overMcp = await invoke(client, { ...counted(taskId), proof_method: 'result-hash' });
      const overA2a = await (
        await a2aBuyer(host, ALICE)
      ).invoke({ ...counted(taskId), proof_method: 'result-hash' });
      expect(overA2a.proof).toEqual(overMcp.proof);
      expect(overA2a.output).toEqual(overMcp.output);
      expect(counter.runs()).toBe(1);
    },
  );

  it('replays over MCP an invoke finished over A2A', async () => {
    const counter = countingCapability();
    const host = await acmpHost({ capabilities: [counter], flags: TOKEN_FLAGS });
    const taskId = newTaskId();
    const overA2a = await (await a2aBuyer(host, ALICE)).invoke(counted(taskId));
    const overMcp = await (await mcpBuyer(host, ALICE)).invoke(counted(taskId));
    expect(overMcp.output).toEqual(overA2a.output);
    expect(counter.runs()).toBe(1);
  });

  it('joins over A2A an invoke still running over MCP: one execution, both get its result', async () => {
    const counter = countingCapability('count-runs', 300);
    const host = await acmpHost({ capabilities: [counter], flags: TOKEN_FLAGS });
    const rec = await httpClient(host, 'modern', ALICE);
    const taskId = newTaskId();
    const first = invoke(rec.client, counted(taskId));
    await counter.started;
    const joined = await (await a2aBuyer(host, ALICE)).invoke(counted(taskId));
    expect((await first).output).toEqual(joined.output);
    expect(counter.runs()).toBe(1);
  });

  it('replays streamed chunks across bindings: MCP stream, then the same task streamed over A2A', async () => {
    const host = tokenHost();
    const taskId = newTaskId();
    const params = {
      task_id: taskId,
      capability: 'summarize',
      input: { type: 'text', data: 'One fact. Two facts here. Three facts there. Four.' },
      max_price_cu: 0.01,
      stream: true,
    };
    const chunksOf = async (
      events: AsyncIterable<{ kind: string; params?: unknown }>,
    ): Promise<unknown[]> => {
      const chunks: unknown[] = [];
      for await (const event of events) if (event.kind === 'chunk') chunks.push(event.params);
      return chunks;
    };
    const overMcp = await chunksOf((await mcpBuyer(host, ALICE)).stream(params));
    const overA2a = await chunksOf((await a2aBuyer(host, ALICE)).stream(params));
    expect(overMcp.length).toBeGreaterThan(1);
    expect(overA2a).toEqual(overMcp);
  });
});

describe("another agent's task_id (docs/acmp-a2a-binding.md §9) is refused on either binding", () => {
  it.each(ERAS)(
    'refuses a running MCP (%s) task to another agent over MCP and over A2A, and the owner still gets it',
    async (era) => {
      const counter = countingCapability('count-runs', 300);
      const host = await acmpHost({ capabilities: [counter], flags: TOKEN_FLAGS });
      const alice = await httpClient(host, era, ALICE);
      const bob = await httpClient(host, era, BOB);
      const taskId = newTaskId();
      const owner = invoke(alice.client, counted(taskId));
      await counter.started;
      expect(await rpcError(invoke(bob.client, counted(taskId)))).toMatchObject({
        code: -32602,
        data: { detail: 'task_id is already in use' },
      });
      await expect((await a2aBuyer(host, BOB)).invoke(counted(taskId))).rejects.toMatchObject({
        code: -32602,
        data: { detail: 'task_id is already in use' },
      });
      expect((await owner).output).toBeDefined();
      expect(counter.runs()).toBe(1);
    },
  );

  it('refuses over MCP a finished A2A task of another agent, never replaying it', async () => {
    const host = tokenHost();
    const taskId = newTaskId();
    await (await a2aBuyer(host, ALICE)).invoke(sentiment({ task_id: taskId }));
    const error = await (
      await mcpBuyer(host, BOB)
    )
      .invoke(sentiment({ task_id: taskId }) as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AcmpError);
    expect(error).toMatchObject({ code: -32602, data: { detail: 'task_id is already in use' } });
  });

  it('lets the same agent cancel over MCP a task it started over A2A', async () => {
    const host = tokenHost();
    const taskId = newTaskId();
    const a2a = await a2aBuyer(host, ALICE);
    const events = a2a.stream({
      task_id: taskId,
      capability: 'slow-count',
      input: { type: 'json', data: { n: 10_000 } },
      max_price_cu: 2,
    });
    const outcome = (async () => {
      try {
        for await (const event of events) void event;
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    const rec = await httpClient(host, 'modern', ALICE);
    const join = rpcError(
      invoke(rec.client, {
        task_id: taskId,
        capability: 'slow-count',
        input: { type: 'json', data: { n: 10_000 } },
        max_price_cu: 2,
      }),
    );
    await notified(rec, (n) => n.method === 'acmp/heartbeat');
    await rec.client.notification({ method: 'acmp/cancel', params: { task_id: taskId } });
    expect(await outcome).toMatchObject({ code: -33004 });
    expect((await join).code).toBe(-33004);
  });
});

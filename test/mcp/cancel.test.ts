import { afterEach, describe, expect, it } from 'vitest';
import { tickerCapability } from '../acmp/helpers.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, tempDir } from '../helpers/host.js';
import {
  acmpHost,
  ALICE,
  BOB,
  ERAS,
  httpClient,
  invoke,
  Loose,
  mcpUrl,
  newTaskId,
  notified,
  rpcError,
  slowCount,
  TOKEN_FLAGS,
} from './helpers.js';
import { waitFor } from '../helpers/wait-for.js';

afterEach(cleanup);

// Both eras share a host where a test only talks to it (fresh task ids, its own clients). A test that waits
// for `ticker.aborted()` keeps a host with a ticker of its own: the flag records an abort of any of its
// tasks, so on a shared host another test's cancel would satisfy it. A restart keeps its own host too.
const tickerHost = shared(() => acmpHost({ capabilities: [tickerCapability()] }));
const tokenHost = shared(() => acmpHost({ flags: TOKEN_FLAGS }));

function tick(taskId = newTaskId()): Record<string, unknown> {
  return { task_id: taskId, capability: 'ticker', input: { type: 'text', data: '' }, stream: true };
}

describe.each(ERAS)('acmp/cancel (Layer 1 §3.7) over MCP (%s)', (era) => {
  it('stops the work, answers the invoke with -33004 and stores it: a retry replays -33004', async () => {
    const ticker = tickerCapability();
    const host = await acmpHost({ capabilities: [ticker] });
    const rec = await httpClient(host, era);
    const params = tick();
    const answer = rpcError(invoke(rec.client, params));
    await notified(rec, (n) => n.method === 'acmp/streamChunk');
    await rec.client.notification({
      method: 'acmp/cancel',
      params: { task_id: params.task_id, reason: 'enough' },
    });
    expect((await answer).code).toBe(-33004);
    await waitFor(() => ticker.aborted());
    expect((await rpcError(invoke(rec.client, params))).code).toBe(-33004);
  });

  it('answers the request form with an empty result, and -32602 for an unknown task', async () => {
    const host = tickerHost();
    const rec = await httpClient(host, era);
    const params = tick();
    const answer = rpcError(invoke(rec.client, params));
    await notified(rec, (n) => n.method === 'acmp/streamChunk');
    const { _meta, ...cancelled } = await rec.client.request(
      { method: 'acmp/cancel', params: { task_id: params.task_id } },
      Loose,
    );
    expect(cancelled).toEqual({});
    expect((await answer).code).toBe(-33004);
    expect(
      (await rpcError(rec.client.request({ method: 'acmp/cancel', params: { task_id: newTaskId() } }, Loose)))
        .code,
    ).toBe(-32602);
  });

  it("never cancels another caller's task", async () => {
    const host = tokenHost();
    const alice = await httpClient(host, era, ALICE);
    const bob = await httpClient(host, era, BOB);
    const params = slowCount(20);
    const answer = invoke(alice.client, params);
    await notified(alice, (n) => n.method === 'acmp/heartbeat');
    await bob.client.notification({ method: 'acmp/cancel', params: { task_id: params.task_id } });
    expect(
      (
        await rpcError(
          bob.client.request({ method: 'acmp/cancel', params: { task_id: params.task_id } }, Loose),
        )
      ).code,
    ).toBe(-32602);
    expect((await answer).output).toEqual({ type: 'json', data: { count: 20 } });
  });
});

describe('closing the request stream (MCP 2026-07-28 cancellation: Streamable HTTP)', () => {
  it('cancels the task: the work stops and a retry replays -33004', async () => {
    const ticker = tickerCapability();
    const host = await acmpHost({ capabilities: [ticker] });
    const rec = await httpClient(host, 'modern');
    const params = tick();
    const abort = new AbortController();
    const answer = invoke(rec.client, params, { signal: abort.signal }).catch((error: unknown) => error);
    await notified(rec, (n) => n.method === 'acmp/streamChunk');
    abort.abort(new Error('buyer closed the stream'));
    await answer;
    await waitFor(() => ticker.aborted());
    expect((await rpcError(invoke(rec.client, params))).code).toBe(-33004);
  });

  it('cancels a 2025-era request whose SSE response is closed as well', async () => {
    const ticker = tickerCapability();
    const host = await acmpHost({ capabilities: [ticker] });
    const params = tick();
    const abort = new AbortController();
    const res = await fetch(mcpUrl(host), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'acmp/invoke', params }),
      signal: abort.signal,
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    await reader.read();
    abort.abort();
    await waitFor(() => ticker.aborted());
    const rec = await httpClient(host, 'legacy');
    expect((await rpcError(invoke(rec.client, params))).code).toBe(-33004);
  });

  it('does not cancel when the host stops: the work drains and a retry after the restart replays its result', async () => {
    const dataDir = tempDir();
    const host = await acmpHost({ dataDir });
    const rec = await httpClient(host, 'modern');
    const params = slowCount(40);
    // The SDK leaves this request pending (its stream ended without a response); cleanup closes the client.
    void invoke(rec.client, params).catch(() => undefined);
    await notified(rec, (n) => n.method === 'acmp/heartbeat');
    await host.close();
    const again = await acmpHost({ dataDir });
    const { client } = await httpClient(again, 'modern');
    expect((await invoke(client, params)).output).toEqual({ type: 'json', data: { count: 40 } });
  });
});

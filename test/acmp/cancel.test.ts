import { afterEach, describe, expect, it } from 'vitest';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { taskStateName } from '../../src/a2a/part-codec.js';
import { acmpRootOf } from '../../src/a2a/acmp-part.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { cleanup } from '../helpers/host.js';
import { A2A_TRANSPORTS, clientTransport, type A2ATransport } from '../helpers/transports.js';
import {
  acmpHost,
  acmpMessage,
  callRaw,
  cancelMessage,
  invokeRoot,
  replyError,
  replyRoot,
  sendRaw,
  streamRaw,
  streamRoot,
  tickerCapability,
  type RawHost,
  type RpcBody,
} from './helpers.js';

afterEach(cleanup);

async function tickerHost(
  transport: A2ATransport,
): Promise<{ host: RawHost; ticker: ReturnType<typeof tickerCapability> }> {
  const ticker = tickerCapability();
  const host = await acmpHost({ transport, capabilities: [ticker, ...demoCapabilities({ stepMs: 5 })] });
  return { host, ticker };
}

/** Streams a ticker invoke; calls `stop` once two chunks arrived; returns every ACMP root and the last state. */
async function streamUntilStopped(
  host: RawHost,
  stop: (taskId: string) => Promise<unknown>,
): Promise<{ roots: Record<string, unknown>[]; state: string }> {
  const root = invokeRoot({
    capability: 'ticker',
    input: { type: 'text', data: 'go' },
    stream: true,
    max_price_cu: 1,
  });
  const roots: Record<string, unknown>[] = [];
  let state = '';
  let stopping: Promise<unknown> | undefined;
  for await (const r of streamRaw(host, acmpMessage(root))) {
    const acmp = streamRoot(r);
    if (acmp) roots.push(acmp);
    state = (r.statusUpdate as { status: { state: string } } | undefined)?.status.state ?? state;
    if (!stopping && roots.filter((x) => x.acmp_method === 'acmp/streamChunk').length === 2) {
      // Kept as a value so a failing stop is reported after the stream, never as an unhandled rejection.
      stopping = stop(root.params.task_id as string).then(
        () => undefined,
        (error: unknown) => ({ failed: error }),
      );
    }
  }
  const outcome = (await stopping) as { failed: unknown } | undefined;
  if (outcome) throw outcome.failed;
  return { roots, state };
}

function getTask(host: RawHost, id: string): Promise<RpcBody> {
  return callRaw(host, 'GetTask', id);
}

describe.each(A2A_TRANSPORTS)('over %s', (transport) => {
  describe('acmp/cancel (Layer 1 §3.7)', () => {
    it('stops the work: the invoke is answered with -33004, chunks stop, the A2A task completes', async () => {
      const { host, ticker } = await tickerHost(transport);
      const { roots, state } = await streamUntilStopped(host, (id) => sendRaw(host, cancelMessage(id)));
      const errorAt = roots.findIndex((r) => r.acmp_error !== undefined);
      expect((roots[errorAt]!.acmp_error as { code: number }).code).toBe(-33004);
      expect(errorAt).toBe(roots.length - 1);
      expect(state).toBe('TASK_STATE_COMPLETED');
      expect(ticker.aborted()).toBe(true);
    });

    it('answers the cancel message with the task', async () => {
      const { host } = await tickerHost(transport);
      let reply: RpcBody | undefined;
      await streamUntilStopped(host, async (id) => (reply = await sendRaw(host, cancelMessage(id))));
      expect(reply?.result?.task?.id).toBeDefined();
    });

    it('refuses a cancel for an unknown task with -32602', async () => {
      const { host } = await tickerHost(transport);
      expect(replyError(await sendRaw(host, cancelMessage('task_never_seen')))?.code).toBe(-32602);
    });

    it('refuses a cancel whose Message.task_id differs from params.task_id', async () => {
      const { host } = await tickerHost(transport);
      const message = acmpMessage(
        { acmp_method: 'acmp/cancel', params: { task_id: 'task_a' } },
        { task_id: 'task_b' },
      );
      expect(replyError(await sendRaw(host, message))?.code).toBe(-32602);
    });
  });

  describe('A2A CancelTask (A2A §3.1.5, A2A binding §3.4 exception)', () => {
    it('ends the task canceled, still delivers the -33004 payload, and stops the chunks', async () => {
      const { host, ticker } = await tickerHost(transport);
      const client = await createA2AClient(await fetchAgentCard(host.url), {
        transport: clientTransport(transport),
      });
      let canceled: { state: string; root: unknown; yieldedAtCancel: number } | undefined;
      const { roots, state } = await streamUntilStopped(host, async (id) => {
        const task = await client.cancelTask({ tenant: '', id, metadata: undefined });
        canceled = {
          state: taskStateName(task.status?.state),
          root: acmpRootOf(task.status?.message),
          yieldedAtCancel: ticker.yielded(),
        };
      });
      expect(canceled?.state).toBe('canceled');
      expect(canceled?.root).toMatchObject({ kind: 'error', error: { code: -33004 } });
      expect(state).toBe('TASK_STATE_CANCELED');
      expect((roots.at(-1)!.acmp_error as { code: number }).code).toBe(-33004);
      expect(ticker.aborted()).toBe(true);
      // Chunks stop: the handler yields nothing after CancelTask answered, and nothing follows the -33004.
      expect(ticker.yielded()).toBe(canceled?.yieldedAtCancel);
      const errorAt = roots.findIndex((r) => 'acmp_error' in r);
      expect(roots.slice(errorAt + 1).filter((r) => r.acmp_method === 'acmp/streamChunk')).toHaveLength(0);
    });

    it('GetTask then shows canceled with the acmp_error part', async () => {
      const { host } = await tickerHost(transport);
      let taskId = '';
      await streamUntilStopped(host, async (id) => {
        taskId = id;
        await callRaw(host, 'CancelTask', id);
      });
      const task = (await getTask(host, taskId)).result;
      expect(task?.status?.state).toBe('TASK_STATE_CANCELED');
      expect((task?.status?.message?.parts[0]?.data?.acmp_error as { code: number }).code).toBe(-33004);
    });

    it('keeps the task canceled when the buyer retries the invoke afterwards', async () => {
      const { host } = await tickerHost(transport);
      const root = invokeRoot({
        capability: 'ticker',
        input: { type: 'text', data: 'go' },
        stream: true,
        max_price_cu: 1,
      });
      for await (const r of streamRaw(host, acmpMessage(root))) {
        if (streamRoot(r)?.acmp_method === 'acmp/streamChunk')
          await callRaw(host, 'CancelTask', root.params.task_id as string);
      }
      const again = await sendRaw(host, acmpMessage({ ...root, params: { ...root.params, stream: false } }));
      expect(replyError(again)?.code).toBe(-33004);
      const task = (await getTask(host, root.params.task_id as string)).result;
      expect(task?.status?.state).toBe('TASK_STATE_CANCELED');
    });

    it('refuses to cancel a finished ACMP task (TaskNotCancelable, -32002)', async () => {
      const { host } = await tickerHost(transport);
      const root = invokeRoot();
      await sendRaw(host, acmpMessage(root));
      const res = await callRaw(host, 'CancelTask', root.params.task_id as string);
      expect(res.error?.code).toBe(-32002);
    });
  });

  describe('GetTask on a finished ACMP task (A2A binding, docs/acmp-a2a-binding.md "Placement")', () => {
    it('returns the acmp_result part as status.message and the last history entry', async () => {
      const { host } = await tickerHost(transport);
      const root = invokeRoot({ proof_method: 'result-hash' });
      const sent = replyRoot(await sendRaw(host, acmpMessage(root)));
      const task = (await getTask(host, root.params.task_id as string)).result;
      expect(task?.status?.state).toBe('TASK_STATE_COMPLETED');
      expect(task?.status?.message?.parts[0]?.data).toEqual(sent);
      expect(task?.history?.map((m) => Object.keys(m.parts[0]!.data!)[0])).toEqual([
        'acmp_method',
        'acmp_result',
      ]);
    });

    it('returns the acmp_error part of an invoke that failed while running', async () => {
      const { host } = await tickerHost(transport);
      const root = invokeRoot({
        capability: 'slow-count',
        input: { type: 'json', data: { n: 10_000 } },
        max_price_cu: 5,
        timeout_ms: 50,
      });
      await sendRaw(host, acmpMessage(root));
      const task = (await getTask(host, root.params.task_id as string)).result;
      expect(task?.status?.state).toBe('TASK_STATE_COMPLETED');
      expect((task?.status?.message?.parts[0]?.data?.acmp_error as { code: number }).code).toBe(-33003);
    });

    it('persists no chunks or heartbeats: history is [invoke, final]', async () => {
      const { host } = await tickerHost(transport);
      const { roots } = await streamUntilStopped(host, (id) => sendRaw(host, cancelMessage(id)));
      const id = (roots.find((r) => r.acmp_error)!.acmp_error as { data: { task_id: string } }).data.task_id;
      const task = (await getTask(host, id)).result;
      expect(task?.history).toHaveLength(2);
    });
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import type { AcmpCapability, HandlerContext } from '../../src/acmp/provider/provider-types.js';
import { resultHash } from '../../src/acmp/wire/proof.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup } from '../helpers/host.js';
import { A2A_TRANSPORTS } from '../helpers/transports.js';
import { acmpHost, acmpMessage, buyerOptions, invokeRoot, streamRaw, streamRoot } from './helpers.js';

afterEach(cleanup);

const TEXT =
  'Revenue grew 12% year over year. The board met on Tuesday. Margins improved in every region. ' +
  'Costs declined slightly. Guidance for next year was raised. The weather was mild.';

/** Waits on its signal only, so every heartbeat it causes is an automatic one; the test releases it. */
function idleCapability(): AcmpCapability & { release: () => void } {
  let release = (): void => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    id: 'idle',
    price: 0.001,
    release: () => release(),
    async handler(_input, ctx: HandlerContext) {
      await Promise.race([
        released,
        new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)),
        ),
      ]);
      return { type: 'text', data: 'done' };
    },
  };
}

describe.each(A2A_TRANSPORTS)('over %s', (transport) => {
  describe('output streaming over SendStreamingMessage (Layer 1 §7, A2A binding §3.2)', () => {
    // Each test streams a task of its own (fresh task ids): one host per transport serves them all.
    const streamingHost = shared(() => acmpHost({ transport }));

    it('delivers chunks seq 0,1,2… as status-update messages, the last final, then acmp_result without output', async () => {
      const host = streamingHost();
      const root = invokeRoot({
        capability: 'summarize',
        input: { type: 'text', data: TEXT },
        max_price_cu: 1,
        stream: true,
        proof_method: 'result-hash',
      });
      const results = [];
      for await (const r of streamRaw(host, acmpMessage(root))) results.push(r);

      const first = results[0]!.task as { id: string; status: { state: string } };
      expect(first.id).toBe(root.params.task_id);
      expect(first.status.state).toBe('TASK_STATE_WORKING');
      const roots = results.slice(1).map((r) => streamRoot(r)!);
      const chunks = roots
        .filter((r) => r.acmp_method === 'acmp/streamChunk')
        .map((r) => r.params as { seq: number; final?: boolean; chunk: { data: string } });
      expect(chunks.map((c) => c.seq)).toEqual([0, 1, 2]);
      expect(chunks.map((c) => c.final === true)).toEqual([false, false, true]);

      const last = results.at(-1)!.statusUpdate as { status: { state: string } };
      expect(last.status.state).toBe('TASK_STATE_COMPLETED');
      const result = roots.at(-1)!.acmp_result as {
        output_streamed: boolean;
        output?: unknown;
        proof: { hash: string };
      };
      expect(result.output_streamed).toBe(true);
      expect(result).not.toHaveProperty('output');
      // docs/acmp-core.md "Chunk assembly": string chunks of one type concatenate.
      expect(result.proof.hash).toBe(
        resultHash({ type: 'text', data: chunks.map((c) => c.chunk.data).join('') }),
      );
    });

    it('lets the SDK client reassemble the streamed output and verify its proof', async () => {
      const host = streamingHost();
      const buyer = await createAcmpBuyer(buyerOptions(host));
      const kinds: string[] = [];
      let output: unknown;
      for await (const event of buyer.stream({
        capability: 'summarize',
        input: { type: 'text', data: TEXT },
        max_price_cu: 1,
        stream: true,
        proof_method: 'result-hash',
      })) {
        kinds.push(event.kind);
        if (event.kind === 'result') output = event.output;
      }
      expect(kinds.filter((k) => k === 'chunk')).toHaveLength(3);
      expect(kinds.at(-1)).toBe('result');
      expect(output).toMatchObject({
        type: 'text',
        data: expect.stringContaining('Revenue grew') as unknown,
      });
    });

    it('streams a whole-output handler as one final chunk', async () => {
      const host = streamingHost();
      const roots = [];
      for await (const r of streamRaw(host, acmpMessage(invokeRoot({ stream: true }))))
        roots.push(streamRoot(r));
      const chunks = roots.filter((r) => r?.acmp_method === 'acmp/streamChunk').map((r) => r!.params);
      expect(chunks).toEqual([expect.objectContaining({ seq: 0, final: true })]);
    });
  });

  describe('heartbeats (Layer 1 §3.6, A2A binding §3.2)', () => {
    // A host per test: each sets its own heartbeat interval (and the first its own idle capability).
    it('arrive automatically every heartbeat_interval_ms while a task runs', async () => {
      const idle = idleCapability();
      const host = await acmpHost({ transport, capabilities: [idle], heartbeatIntervalMs: 40 });
      const root = invokeRoot({ capability: 'idle', input: { type: 'text', data: 'x' }, stream: true });
      const beats: number[] = [];
      const started = Date.now();
      let result: Record<string, unknown> | undefined;
      for await (const r of streamRaw(host, acmpMessage(root))) {
        const acmp = streamRoot(r);
        if (acmp?.acmp_method === 'acmp/heartbeat') {
          expect(acmp.params).toEqual({ task_id: root.params.task_id });
          beats.push(Date.now());
          if (beats.length === 4) idle.release();
        }
        if (acmp?.acmp_result) result = acmp.acmp_result as Record<string, unknown>;
      }
      expect(beats.length).toBeGreaterThanOrEqual(4);
      // Timers never fire early: four beats take at least about four intervals.
      expect(beats[3]! - started).toBeGreaterThanOrEqual(4 * 40 - 10);
      expect(result).toMatchObject({ task_id: root.params.task_id });
    });

    it('carry the progress and detail a handler reports (slow-count)', async () => {
      const host = await acmpHost({
        transport,
        capabilities: demoCapabilities({ stepMs: 2 }),
        heartbeatIntervalMs: 5000,
      });
      const buyer = await createAcmpBuyer(buyerOptions(host));
      const progress: { progress?: number; detail?: string }[] = [];
      for await (const event of buyer.stream({
        capability: 'slow-count',
        input: { type: 'json', data: { n: 4 } },
        max_price_cu: 1,
      })) {
        if (event.kind === 'heartbeat')
          progress.push({ progress: event.params.progress, detail: event.params.detail });
      }
      expect(progress).toEqual([
        { progress: 0.25, detail: 'counted 1 of 4' },
        { progress: 0.5, detail: 'counted 2 of 4' },
        { progress: 0.75, detail: 'counted 3 of 4' },
        { progress: 1, detail: 'counted 4 of 4' },
      ]);
    });

    it('are not sent when the provider advertises no heartbeat_interval_ms', async () => {
      const host = await acmpHost({
        transport,
        capabilities: demoCapabilities({ stepMs: 2 }),
        heartbeatIntervalMs: null,
      });
      const roots = [];
      const root = invokeRoot({
        capability: 'slow-count',
        input: { type: 'json', data: { n: 5 } },
        max_price_cu: 1,
      });
      for await (const r of streamRaw(host, acmpMessage(root))) roots.push(streamRoot(r));
      expect(roots.some((r) => r?.acmp_method === 'acmp/heartbeat')).toBe(false);
      expect(roots.at(-1)?.acmp_result).toBeDefined();
    });
  });
});

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import type { Payload } from '../../src/acmp/wire/task-messages.js';
import { assembleChunks, verifyProof } from '../../src/acmp/wire/proof.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import { connectMcpAcmpBuyer } from '../../src/mcp/buyer.js';
import { cleanup, onCleanup } from '../helpers/host.js';
import { acmpHost, ERAS, httpClient, invoke, mcpUrl, newTaskId, slowCount } from './helpers.js';

afterEach(cleanup);

const REPORT =
  'Revenue grew 12% year over year. The board met on Tuesday. Margins improved in every region. Costs declined slightly.';

function summarize(params: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    task_id: newTaskId(),
    capability: 'summarize',
    input: { type: 'text', data: REPORT },
    max_price_cu: 0.01,
    proof_method: 'result-hash',
    ...params,
  };
}

describe.each(ERAS)('output streaming (Layer 1 §3.5, §7.1) over MCP (%s)', (era) => {
  it('sends acmp/streamChunk notifications seq 0…n on the request stream, the last final, then a result with output_streamed', async () => {
    const rec = await httpClient(await acmpHost(), era);
    const params = summarize({ stream: true });
    const result = await invoke(rec.client, params);
    const chunks = rec.notifications.filter((n) => n.method === 'acmp/streamChunk').map((n) => n.params);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
    expect(chunks.map((c) => c.final)).toEqual(chunks.map((_, i) => i === chunks.length - 1));
    expect(chunks.every((c) => c.task_id === params.task_id)).toBe(true);
    expect(result).toMatchObject({ task_id: params.task_id, output_streamed: true });
    expect(result.output).toBeUndefined();
    // Layer 3 §3.1: the proof covers the assembled output.
    const output = assembleChunks(chunks.map((c) => c.chunk as Payload));
    expect(
      verifyProof(result.proof as never, { method: 'result-hash', output, input: params.input as Payload })
        .ok,
    ).toBe(true);
  });

  it('answers stream: false with the whole output and no chunks', async () => {
    const rec = await httpClient(await acmpHost(), era);
    const params = summarize();
    const result = await invoke(rec.client, params);
    expect(rec.notifications.filter((n) => n.method === 'acmp/streamChunk')).toEqual([]);
    expect(result).toMatchObject({ output_streamed: false, output: { type: 'text' } });
    expect(
      verifyProof(result.proof as never, {
        method: 'result-hash',
        output: result.output as Payload,
        input: params.input as Payload,
      }).ok,
    ).toBe(true);
  });
});

/** A capability that works for `ms` without reporting progress: only the interval heartbeats show life. */
const quiet: AcmpCapability = {
  id: 'quiet',
  price: 0.001,
  handler: async (_input, ctx) => {
    await new Promise((resolve) => setTimeout(resolve, 450));
    return { type: 'text', data: ctx.taskId };
  },
};

describe.each(ERAS)('heartbeats (Layer 1 §3.6) over MCP (%s)', (era) => {
  it('sends progress heartbeats for the task before its result', async () => {
    const rec = await httpClient(await acmpHost(), era);
    const params = slowCount(5);
    await invoke(rec.client, params);
    const beats = rec.notifications.filter((n) => n.method === 'acmp/heartbeat').map((n) => n.params);
    const progress = beats.filter((b) => b.progress !== undefined).map((b) => b.progress as number);
    expect(progress).toEqual([0.2, 0.4, 0.6, 0.8, 1]);
    expect(beats.every((b) => b.task_id === params.task_id)).toBe(true);
  });

  it('beats every heartbeat_interval_ms while a task runs, also for stream: false', async () => {
    const rec = await httpClient(await acmpHost({ capabilities: [quiet], heartbeatIntervalMs: 100 }), era);
    await invoke(rec.client, {
      task_id: newTaskId(),
      capability: 'quiet',
      input: { type: 'text', data: '' },
    });
    expect(rec.notifications.filter((n) => n.method === 'acmp/heartbeat').length).toBeGreaterThanOrEqual(2);
  });
});

describe('liveness window (Layer 1 §3.6) over MCP: a provider killed mid-stream', () => {
  const HEARTBEAT_MS = 200;
  const PROVIDER = fileURLToPath(new URL('../acmp/fixtures/provider-process.ts', import.meta.url));

  it('makes the MCP buyer fail with -33003 liveness, long before timeout_ms', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', PROVIDER, String(HEARTBEAT_MS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    onCleanup(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
    const url = await new Promise<string>((resolve) =>
      createInterface({ input: child.stdout }).on(
        'line',
        (line) => /^listening (\S+)/.exec(line)?.[1] && resolve(line.split(' ')[1]!),
      ),
    );
    const buyer = await connectMcpAcmpBuyer({ endpoint: { url: mcpUrl({ url }) }, era: 'modern' });
    onCleanup(() => buyer.close());
    let killedAt = 0;
    let failure: unknown;
    try {
      for await (const event of buyer.stream({
        capability: 'slow-count',
        input: { type: 'json', data: { n: 10_000 } },
        max_price_cu: 2,
        timeout_ms: 30_000,
      })) {
        if (event.kind === 'heartbeat' && killedAt === 0) {
          killedAt = Date.now();
          child.kill('SIGKILL');
        }
      }
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(AcmpError);
    expect(failure).toMatchObject({ code: -33003, data: { reason: 'liveness' } });
    expect(Date.now() - killedAt).toBeLessThan(3 * HEARTBEAT_MS + 2000);
  });
});

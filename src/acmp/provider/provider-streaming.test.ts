import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { sleepOn } from '../../shared/clock.js';
import { assembleChunks, verifyProof } from '../wire/proof.js';
import { createAcmpProvider } from './provider.js';
import type { AcmpCapability, ProviderEvent } from './provider.js';
import { buildInvokeParams, collect, probeCapability } from '../../../test/helpers/acmp-testing.js';

const chunks = [
  { type: 'text', data: 'one ' },
  { type: 'text', data: 'two ' },
  { type: 'text', data: 'three' },
];

describe('output streaming (Layer 1 §3.5, §7.1)', () => {
  it('sends chunks with seq 0,1,2…, the last final, then a result without output', async () => {
    const provider = createAcmpProvider({
      capabilities: [probeCapability('echo', { chunks, gated: false })],
    });
    const params = buildInvokeParams({ stream: true, proof_method: 'result-hash' });
    const events = await collect(provider.invoke(params, { canStream: true }));
    expect(events.slice(0, 3)).toEqual(
      chunks.map((chunk, seq) => ({
        kind: 'chunk',
        params: { task_id: params.task_id, seq, chunk, final: seq === 2 },
      })),
    );
    const last = events[3]!;
    if (last.kind !== 'result') throw new Error('expected a result');
    expect(last.result.output_streamed).toBe(true);
    expect(last.result).not.toHaveProperty('output');
    expect(
      verifyProof(last.result.proof, {
        method: 'result-hash',
        output: assembleChunks(chunks),
        input: params.input!,
      }),
    ).toEqual({ ok: true });
  });

  it('assembles the chunks into output for a non-streaming invoke', async () => {
    const provider = createAcmpProvider({
      capabilities: [probeCapability('echo', { chunks, gated: false })],
    });
    const events = await collect(provider.invoke(buildInvokeParams(), { canStream: true }));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'result',
      result: { output: { type: 'text', data: 'one two three' }, output_streamed: false },
    });
  });

  it('streams a whole-output handler as one final chunk', async () => {
    const provider = createAcmpProvider({ capabilities: [probeCapability('echo', { gated: false })] });
    const events = await collect(provider.invoke(buildInvokeParams({ stream: true }), { canStream: true }));
    expect(events.map((e) => e.kind)).toEqual(['chunk', 'result']);
    expect(events[0]).toMatchObject({
      params: { seq: 0, final: true, chunk: { type: 'text', data: 'echo:hello' } },
    });
  });

  it('stops chunks and answers -33004 when cancelled mid-stream (§7.3)', async () => {
    const probe = probeCapability('echo', { chunks });
    const provider = createAcmpProvider({ capabilities: [probe] });
    const params = buildInvokeParams({ stream: true });
    const events: ProviderEvent[] = [];
    const done = (async () => {
      for await (const e of provider.invoke(params, { canStream: true })) events.push(e);
    })();
    probe.release();
    probe.release();
    await vi.waitFor(() => expect(events).toHaveLength(1));
    await provider.cancel({ task_id: params.task_id });
    await done;
    expect(events.map((e) => e.kind)).toEqual(['chunk', 'error']);
    expect(events[1]).toMatchObject({ error: { code: -33004 } });
  });
});

describe('heartbeats (Layer 1 §3.6), on manual time', () => {
  const slowOn = (clock: ManualClock): AcmpCapability => ({
    id: 'slow',
    price: 0,
    async handler(_input, ctx) {
      await sleepOn(clock, 2500);
      ctx.heartbeat(0.5, 'half way');
      await sleepOn(clock, 2500);
      return { type: 'json', data: { done: true } };
    },
  });

  it('emits automatic heartbeats at the interval plus reported progress', async () => {
    const clock = new ManualClock();
    const provider = createAcmpProvider({ capabilities: [slowOn(clock)], heartbeatIntervalMs: 1000, clock });
    const params = buildInvokeParams({ capability: 'slow' });
    const pending = collect(provider.invoke(params, { canStream: true }));
    await clock.advance(5000);
    const events = await pending;
    const beats = events.filter((e) => e.kind === 'heartbeat');
    // Automatic beats at 1 s … 5 s (the interval was set before the handler's 5 s timer) plus one progress beat.
    expect(beats).toHaveLength(6);
    expect(beats).toContainEqual({
      kind: 'heartbeat',
      params: { task_id: params.task_id, progress: 0.5, detail: 'half way' },
    });
    expect(events.at(-1)?.kind).toBe('result');
    // Only the host's liveness beat is left; closing the provider stops it.
    await provider.close();
    expect(clock.pending).toBe(0);
  });

  it('emits none when heartbeats are not advertised', async () => {
    const clock = new ManualClock();
    const provider = createAcmpProvider({ capabilities: [slowOn(clock)], heartbeatIntervalMs: null, clock });
    const pending = collect(provider.invoke(buildInvokeParams({ capability: 'slow' }), { canStream: true }));
    await clock.advance(5000);
    expect((await pending).map((e) => e.kind)).toEqual(['result']);
  });

  it('emits none when the transport cannot carry notifications', async () => {
    const clock = new ManualClock();
    const provider = createAcmpProvider({ capabilities: [slowOn(clock)], heartbeatIntervalMs: 1000, clock });
    const pending = collect(provider.invoke(buildInvokeParams({ capability: 'slow' }), { canStream: false }));
    await clock.advance(5000);
    expect((await pending).map((e) => e.kind)).toEqual(['result']);
  });
});

describe('consumer detach vs cancel (docs/acmp-core.md)', () => {
  it('stops delivery on detach but lets the work finish and stores the outcome', async () => {
    const echo = probeCapability('echo');
    const provider = createAcmpProvider({ capabilities: [echo] });
    const params = buildInvokeParams();
    const detach = new AbortController();
    const pending = collect(provider.invoke(params, { canStream: true, signal: detach.signal }));
    await vi.waitFor(() => expect(echo.runs).toBe(1));
    detach.abort();
    expect(await pending).toEqual([]);
    expect(echo.signals[0]?.aborted).toBe(false);
    echo.release();
    await vi.waitFor(async () =>
      expect(await provider.outcome(params.task_id)).toMatchObject({ kind: 'result' }),
    );
  });
});

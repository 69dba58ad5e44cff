import { afterEach, describe, expect, it, vi } from 'vitest';
import { collect, probeCapability, type ProbeCapability } from '../helpers/acmp-testing.js';
import {
  createAcmpBuyerCore,
  type AcmpBuyerTransport,
  type AcmpInbound,
  type BuyerEvent,
} from '../../src/acmp/buyer/buyer.js';
import { createLoopbackTransport, type LoopbackOptions } from '../../src/acmp/loopback-transport.js';
import { createAcmpProvider } from '../../src/acmp/provider/provider.js';
import type { AcmpProviderOptions } from '../../src/acmp/provider/provider-types.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';

const chunks = [
  { type: 'text', data: 'x' },
  { type: 'text', data: 'y' },
  { type: 'text', data: 'z' },
];

function setup(providerOptions: Partial<AcmpProviderOptions> = {}, loopback: LoopbackOptions = {}) {
  const provider = createAcmpProvider({ capabilities: demoCapabilities({ stepMs: 10 }), ...providerOptions });
  const transport = createLoopbackTransport(provider, loopback);
  const cancel = vi.spyOn(transport, 'cancel');
  const buyer = createAcmpBuyerCore({
    capabilityObject: provider.capabilityObject,
    transport,
    retryDelayMs: 1,
  });
  return { provider, transport, buyer, cancel };
}

const sentimentInput = {
  capability: 'sentiment-analysis',
  input: { type: 'text', data: 'The product quality has declined significantly.' },
};

afterEach(() => {
  vi.useRealTimers();
});

describe('buyer over loopback (Layer 1 §3.1, §3.2)', () => {
  it('invokes with a generated task_id and returns the output', async () => {
    const { buyer } = setup();
    const result = await buyer.invoke({ ...sentimentInput, max_price_cu: 0.005 });
    expect(result.task_id).toMatch(/^task_/);
    expect(result.output).toMatchObject({ type: 'json', data: { sentiment: 'negative' } });
    expect(result.cost_cu).toBeLessThanOrEqual(0.005);
  });

  it('verifies a requested result-hash proof (Layer 3 §3.1)', async () => {
    const { buyer } = setup();
    const result = await buyer.invoke({ ...sentimentInput, proof_method: 'result-hash' });
    expect(result.proof).toMatchObject({ method: 'result-hash' });
  });

  it('rejects a tampered proof', async () => {
    const tamper = (e: AcmpInbound): AcmpInbound =>
      e.kind === 'result'
        ? { kind: 'result', result: { ...e.result, proof: { method: 'result-hash', hash: 'sha256:00' } } }
        : e;
    const { buyer } = setup({}, { mapInbound: tamper });
    await expect(buyer.invoke({ ...sentimentInput, proof_method: 'result-hash' })).rejects.toMatchObject({
      code: -33099,
      data: { reason: 'proof_hash_mismatch' },
    });
  });

  it('rejects with the provider error', async () => {
    const { buyer } = setup();
    await expect(buyer.invoke({ ...sentimentInput, max_price_cu: 0.0001 })).rejects.toMatchObject({
      code: -33001,
    });
  });
});

describe('buyer streaming (Layer 1 §7.1, Layer 3 §3.1)', () => {
  const text =
    'Revenue grew strongly this year. Costs fell. The board approved a dividend. Revenue growth beat targets this year.';

  it('yields chunks in order and a result with the reassembled output, proof verified', async () => {
    const { buyer } = setup();
    const events = await collect(
      buyer.stream({
        capability: 'summarize',
        input: { type: 'json', data: { text, max_sentences: 2 } },
        stream: true,
        proof_method: 'result-hash',
      }),
    );
    const chunkEvents = events.filter((e): e is Extract<BuyerEvent, { kind: 'chunk' }> => e.kind === 'chunk');
    expect(chunkEvents.map((e) => e.params.seq)).toEqual([0, 1]);
    const last = events.at(-1)!;
    if (last.kind !== 'result') throw new Error('expected a result');
    expect(last.result.output_streamed).toBe(true);
    expect(last.output).toEqual({
      type: 'text',
      data: chunkEvents.map((e) => e.params.chunk.data as string).join(''),
    });
  });

  it('rejects an out-of-order chunk and cancels the task', async () => {
    const reorder = (e: AcmpInbound): AcmpInbound =>
      e.kind === 'chunk' && e.params.seq === 1 ? { ...e, params: { ...e.params, seq: 2 } } : e;
    const probe = probeCapability('letters', { chunks, gated: false });
    const { buyer, cancel } = setup({ capabilities: [probe] }, { mapInbound: reorder });
    await expect(
      collect(buyer.stream({ capability: 'letters', input: { type: 'text', data: '' }, stream: true })),
    ).rejects.toMatchObject({
      code: -33099,
      data: { reason: 'chunk_out_of_order', expected: 1, seq: 2 },
    });
    expect(cancel).toHaveBeenCalled();
  });

  it('refuses stream:true when output streaming is not advertised, before sending (Layer 1 §1)', async () => {
    const { buyer, transport } = setup({ outputStreaming: false });
    const send = vi.spyOn(transport, 'send');
    await expect(buyer.invoke({ ...sentimentInput, stream: true })).rejects.toMatchObject({ code: -33007 });
    expect(send).not.toHaveBeenCalled();
  });
});

describe('buyer deadline and liveness (Layer 1 §3.6)', () => {
  it('fails early with -33003 when the provider goes silent, and sends acmp/cancel', async () => {
    vi.useFakeTimers();
    const silent = (e: AcmpInbound): AcmpInbound | undefined => (e.kind === 'heartbeat' ? undefined : e);
    const probe: ProbeCapability = probeCapability('echo');
    const { buyer, cancel } = setup(
      { capabilities: [probe], heartbeatIntervalMs: 1000 },
      { mapInbound: silent },
    );
    const pending = buyer.invoke({
      capability: 'echo',
      input: { type: 'text', data: 'x' },
      timeout_ms: 60_000,
    });
    const assertion = expect(pending).rejects.toMatchObject({ code: -33003, data: { reason: 'liveness' } });
    await vi.advanceTimersByTimeAsync(3001);
    await assertion;
    expect(cancel).toHaveBeenCalledWith(expect.objectContaining({ reason: 'timeout' }), expect.anything());
    expect(probe.signals[0]?.aborted).toBe(true);
  });

  it('keeps a task with heartbeats alive until the hard deadline', async () => {
    vi.useFakeTimers();
    const probe = probeCapability('echo');
    const { buyer } = setup({ capabilities: [probe], heartbeatIntervalMs: 1000 });
    const pending = buyer.invoke({
      capability: 'echo',
      input: { type: 'text', data: 'x' },
      timeout_ms: 10_000,
    });
    const assertion = expect(pending).rejects.toMatchObject({ code: -33003, data: { reason: 'deadline' } });
    await vi.advanceTimersByTimeAsync(10_000);
    await assertion;
  });

  it("uses the buyer's own liveness window when it chooses one (§3.6 only recommends 3 × the interval)", async () => {
    vi.useFakeTimers();
    const silent = (e: AcmpInbound): AcmpInbound | undefined => (e.kind === 'heartbeat' ? undefined : e);
    const probe = probeCapability('echo');
    const provider = createAcmpProvider({ capabilities: [probe], heartbeatIntervalMs: 1000 });
    const buyer = createAcmpBuyerCore({
      capabilityObject: provider.capabilityObject,
      transport: createLoopbackTransport(provider, { mapInbound: silent }),
      livenessWindowMs: (heartbeatIntervalMs) => 10 * heartbeatIntervalMs,
    });
    const pending = buyer.invoke({
      capability: 'echo',
      input: { type: 'text', data: 'x' },
      timeout_ms: 60_000,
    });
    let settled = false;
    void pending.then(
      () => (settled = true),
      () => (settled = true),
    );
    await vi.advanceTimersByTimeAsync(9_000);
    expect(settled).toBe(false);
    const assertion = expect(pending).rejects.toMatchObject({ code: -33003, data: { reason: 'liveness' } });
    await vi.advanceTimersByTimeAsync(1_001);
    await assertion;
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])(
    'refuses a liveness window of %s ms when the buyer is created (CONFIG_INVALID)',
    async (windowMs) => {
      const provider = createAcmpProvider({ capabilities: demoCapabilities(), heartbeatIntervalMs: 1000 });
      const created = Promise.resolve().then(() =>
        createAcmpBuyerCore({
          capabilityObject: provider.capabilityObject,
          transport: createLoopbackTransport(provider),
          livenessWindowMs: () => windowMs,
        }),
      );
      await expect(created).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    },
  );

  it('uses no liveness window when heartbeats are not advertised', async () => {
    vi.useFakeTimers();
    const probe = probeCapability('echo');
    const { buyer } = setup({ capabilities: [probe], heartbeatIntervalMs: null });
    const pending = buyer.invoke({
      capability: 'echo',
      input: { type: 'text', data: 'x' },
      timeout_ms: 60_000,
    });
    await vi.advanceTimersByTimeAsync(30_000);
    probe.release();
    await expect(pending).resolves.toMatchObject({ output: { data: 'echo:x' } });
  });
});

describe('buyer abort and retry (Layer 1 §3.1.1, §3.7)', () => {
  it('rejects with signal.reason and sends acmp/cancel', async () => {
    const probe = probeCapability('echo');
    const { buyer, cancel } = setup({ capabilities: [probe] });
    const controller = new AbortController();
    const pending = buyer.invoke(
      { capability: 'echo', input: { type: 'text', data: 'x' } },
      { signal: controller.signal },
    );
    await vi.waitFor(() => expect(probe.runs).toBe(1));
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(cancel).toHaveBeenCalled();
    await vi.waitFor(() => expect(probe.signals[0]?.aborted).toBe(true));
  });

  it('retries a transport failure with the same task_id without running twice', async () => {
    const probe = probeCapability('echo', { gated: false });
    const provider = createAcmpProvider({ capabilities: [probe] });
    const inner = createLoopbackTransport(provider);
    const seen: string[] = [];
    let failures = 1;
    const flaky: AcmpBuyerTransport = {
      cancel: (p, o) => inner.cancel(p, o),
      async *send(params, options) {
        seen.push(params.task_id);
        for await (const event of inner.send(params, options)) {
          if (event.kind === 'result' && failures-- > 0) throw new Error('connection reset');
          yield event;
        }
      },
    };
    const buyer = createAcmpBuyerCore({
      capabilityObject: provider.capabilityObject,
      transport: flaky,
      retryDelayMs: 1,
    });
    const result = await buyer.invoke({ capability: 'echo', input: { type: 'text', data: 'x' } });
    expect(result.output).toEqual({ type: 'text', data: 'echo:x' });
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
    expect(probe.runs).toBe(1);
  });

  it('resumes a stream after a transport failure without repeating chunks', async () => {
    const probe = probeCapability('letters', { chunks, gated: false });
    const provider = createAcmpProvider({ capabilities: [probe] });
    const inner = createLoopbackTransport(provider);
    let failed = false;
    const flaky: AcmpBuyerTransport = {
      cancel: (p, o) => inner.cancel(p, o),
      async *send(params, options) {
        for await (const event of inner.send(params, options)) {
          yield event;
          if (event.kind === 'chunk' && event.params.seq === 1 && !failed) {
            failed = true;
            throw new Error('connection reset');
          }
        }
      },
    };
    const buyer = createAcmpBuyerCore({
      capabilityObject: provider.capabilityObject,
      transport: flaky,
      retryDelayMs: 1,
    });
    const events = await collect(
      buyer.stream({ capability: 'letters', input: { type: 'text', data: '' }, stream: true }),
    );
    expect(events.map((e) => (e.kind === 'chunk' ? e.params.seq : e.kind))).toEqual([0, 1, 2, 'result']);
    expect(events.at(-1)).toMatchObject({ output: { type: 'text', data: 'xyz' } });
    expect(probe.runs).toBe(1);
  });

  it('gives up after the retries with -33099 transport_failed', async () => {
    const provider = createAcmpProvider({ capabilities: [] });
    const broken: AcmpBuyerTransport = {
      cancel: () => Promise.resolve(),
      send: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('down')) }) }),
    };
    const buyer = createAcmpBuyerCore({
      capabilityObject: provider.capabilityObject,
      transport: broken,
      retries: 1,
      retryDelayMs: 1,
    });
    await expect(buyer.invoke(sentimentInput)).rejects.toMatchObject({
      code: -33099,
      data: { reason: 'transport_failed' },
    });
  });
});

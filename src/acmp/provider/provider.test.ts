import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../shared/logger.js';
import { AcmpError } from '../wire/errors.js';
import { resultHash, verifyProof } from '../wire/proof.js';
import { createAcmpProvider } from './provider.js';
import type { AcmpCapability, ProviderEvent } from './provider.js';
import { buildInvokeParams, collect, probeCapability } from '../../../test/helpers/acmp-testing.js';
import { ManualClock } from '../../../test/helpers/manual-clock.js';

const terminal = (events: ProviderEvent[]): ProviderEvent => {
  expect(events.filter((e) => e.kind === 'result' || e.kind === 'error')).toHaveLength(1);
  return events.at(-1)!;
};
const errorCode = (events: ProviderEvent[]): number | undefined => {
  const last = terminal(events);
  return last.kind === 'error' ? last.error.code : undefined;
};

afterEach(() => {
  vi.useRealTimers();
});

describe('capability object (Layer 1 §1)', () => {
  it('advertises invoke and cancel, streaming and heartbeats by default', () => {
    const provider = createAcmpProvider({ capabilities: [] });
    expect(provider.capabilityObject).toEqual({
      version: '0.1.0',
      role: 'provider',
      accepts: ['acmp/invoke', 'acmp/cancel'],
      emits: ['acmp/streamChunk', 'acmp/heartbeat'],
      features: { output_streaming: true, input_streaming: false, heartbeat_interval_ms: 5000 },
    });
  });

  it('emits only what the features allow', () => {
    const provider = createAcmpProvider({
      capabilities: [],
      outputStreaming: false,
      heartbeatIntervalMs: null,
    });
    expect(provider.capabilityObject.emits).toEqual([]);
    expect(provider.capabilityObject.features).toEqual({ output_streaming: false, input_streaming: false });
  });
});

describe('acmp/invoke (Layer 1 §3.1, §3.2)', () => {
  it('answers a valid invoke with a result carrying the output', async () => {
    const echo = probeCapability('echo', { gated: false });
    const provider = createAcmpProvider({ capabilities: [echo], providerId: 'agent:test:local' });
    const params = buildInvokeParams({ max_price_cu: 0.01 });
    const events = await collect(provider.invoke(params, { canStream: true }));
    expect(terminal(events)).toEqual({
      kind: 'result',
      result: {
        task_id: params.task_id,
        output: { type: 'text', data: 'echo:hello' },
        output_streamed: false,
        tokens_used: 4,
        cost_cu: 0.001,
        provider_id: 'agent:test:local',
      },
    });
  });

  it('rejects malformed params with -32602', async () => {
    const provider = createAcmpProvider({ capabilities: [] });
    expect(errorCode(await collect(provider.invoke({ capability: 'x' }, { canStream: true })))).toBe(-32602);
  });

  it('rejects an unknown capability with -33002', async () => {
    const provider = createAcmpProvider({ capabilities: [] });
    expect(errorCode(await collect(provider.invoke(buildInvokeParams(), { canStream: true })))).toBe(-33002);
  });

  it('rejects a price above max_price_cu with -33001 and min_price_cu', async () => {
    const provider = createAcmpProvider({ capabilities: [probeCapability('echo', { price: 0.008 })] });
    const params = buildInvokeParams({ max_price_cu: 0.005 });
    const last = terminal(await collect(provider.invoke(params, { canStream: true })));
    expect(last).toMatchObject({
      kind: 'error',
      error: { code: -33001, data: { task_id: params.task_id, min_price_cu: 0.008 } },
    });
  });

  it('never reports cost_cu above max_price_cu', async () => {
    const provider = createAcmpProvider({
      capabilities: [probeCapability('echo', { price: 0.005, gated: false })],
    });
    const last = terminal(
      await collect(provider.invoke(buildInvokeParams({ max_price_cu: 0.005 }), { canStream: false })),
    );
    expect(last.kind === 'result' && last.result.cost_cu).toBe(0.005);
  });

  it('rejects a proof method it cannot produce with -33006 (Layer 3 §2)', async () => {
    const noProofs: AcmpCapability = { ...probeCapability('plain', { gated: false }), proofMethods: [] };
    const provider = createAcmpProvider({ capabilities: [probeCapability('echo'), noProofs] });
    expect(
      errorCode(
        await collect(
          provider.invoke(buildInvokeParams({ proof_method: 'tee-attestation' }), { canStream: true }),
        ),
      ),
    ).toBe(-33006);
    expect(
      errorCode(
        await collect(
          provider.invoke(buildInvokeParams({ capability: 'plain', proof_method: 'result-hash' }), {
            canStream: true,
          }),
        ),
      ),
    ).toBe(-33006);
  });

  it('attaches a result-hash proof over output and input (Layer 3 §3.1)', async () => {
    const provider = createAcmpProvider({ capabilities: [probeCapability('echo', { gated: false })] });
    const params = buildInvokeParams({ proof_method: 'result-hash' });
    const last = terminal(await collect(provider.invoke(params, { canStream: true })));
    if (last.kind !== 'result') throw new Error('expected a result');
    expect(last.result.proof).toEqual({
      method: 'result-hash',
      hash: resultHash(last.result.output!),
      input_hash: resultHash(params.input!),
    });
    expect(
      verifyProof(last.result.proof, {
        method: 'result-hash',
        output: last.result.output!,
        input: params.input!,
      }),
    ).toEqual({ ok: true });
  });
});

describe('feature gating (Layer 1 §1, §7.1; A2A binding §3.3)', () => {
  const echo = probeCapability('echo', { gated: false });

  it('declines input streaming with -33007', async () => {
    const provider = createAcmpProvider({ capabilities: [echo] });
    expect(
      errorCode(
        await collect(provider.invoke(buildInvokeParams({ input_stream: true }), { canStream: true })),
      ),
    ).toBe(-33007);
  });

  it('rejects stream:true when output streaming is off with -33007', async () => {
    const provider = createAcmpProvider({ capabilities: [echo], outputStreaming: false });
    expect(
      errorCode(await collect(provider.invoke(buildInvokeParams({ stream: true }), { canStream: true }))),
    ).toBe(-33007);
  });

  it('rejects stream:true when the transport cannot stream with -33007', async () => {
    const provider = createAcmpProvider({ capabilities: [echo] });
    expect(
      errorCode(await collect(provider.invoke(buildInvokeParams({ stream: true }), { canStream: false }))),
    ).toBe(-33007);
  });
});

describe('escrow (Layer 1 §3.3 -33005)', () => {
  it('rejects when the verifier rejects the escrow', async () => {
    const echo = probeCapability('echo', { gated: false });
    const escrow = vi.fn(() => Promise.reject(new AcmpError(-33005, { escrow_id: 'esc_1' })));
    const provider = createAcmpProvider({ capabilities: [echo], escrow });
    const events = await collect(
      provider.invoke(buildInvokeParams({ escrow_id: 'esc_1' }), { canStream: true }),
    );
    expect(errorCode(events)).toBe(-33005);
    expect(escrow).toHaveBeenCalledWith(
      'esc_1',
      expect.objectContaining({ escrow_id: 'esc_1' }),
      expect.anything(),
    );
    expect(echo.runs).toBe(0);
  });
});

describe('timeout_ms is a hard deadline on the provider side (Layer 1 §3.1, §3.6)', () => {
  it('answers -33003 and aborts the handler signal at timeout_ms, not before', async () => {
    const clock = new ManualClock();
    const echo = probeCapability('echo');
    const provider = createAcmpProvider({ capabilities: [echo], clock });
    const pending = collect(provider.invoke(buildInvokeParams({ timeout_ms: 1000 }), { canStream: true }));
    await clock.advance(999);
    expect(echo.signals[0]?.aborted).toBe(false);
    await clock.advance(1);
    expect(errorCode(await pending)).toBe(-33003);
    expect(echo.signals[0]?.aborted).toBe(true);
  });
});

describe('acmp/cancel (Layer 1 §3.7)', () => {
  it('aborts the handler and answers the invoke with -33004', async () => {
    const echo = probeCapability('echo');
    const provider = createAcmpProvider({ capabilities: [echo] });
    const params = buildInvokeParams();
    const pending = collect(provider.invoke(params, { canStream: true }));
    await vi.waitFor(() => expect(echo.runs).toBe(1));
    expect(await provider.cancel({ task_id: params.task_id, reason: 'no longer needed' })).toEqual({
      found: true,
    });
    expect(errorCode(await pending)).toBe(-33004);
    expect(echo.signals[0]?.aborted).toBe(true);
  });

  it('reports an unknown task as not found', async () => {
    const provider = createAcmpProvider({ capabilities: [] });
    expect(await provider.cancel({ task_id: 'task_unknown' })).toEqual({ found: false });
  });

  it('rejects malformed cancel params with -32602', async () => {
    const provider = createAcmpProvider({ capabilities: [] });
    await expect(provider.cancel({})).rejects.toMatchObject({ code: -32602 });
  });
});

describe('internal errors (Layer 1 §3.3 -33099)', () => {
  it('maps a throwing handler to -33099 without leaking the cause', async () => {
    const logError = vi.fn();
    const logger: Logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: logError };
    const broken: AcmpCapability = {
      id: 'broken',
      price: 0,
      handler: () => Promise.reject(new Error('secret path /etc/x')),
    };
    const provider = createAcmpProvider({ capabilities: [broken], logger });
    const events = await collect(
      provider.invoke(buildInvokeParams({ capability: 'broken' }), { canStream: true }),
    );
    expect(terminal(events)).toMatchObject({
      kind: 'error',
      error: { code: -33099, message: 'Internal provider error' },
    });
    expect(JSON.stringify(events)).not.toContain('secret');
    expect(JSON.stringify(logError.mock.calls)).not.toContain('secret');
  });

  it('maps an invalid handler output to -33099', async () => {
    const bad: AcmpCapability = { id: 'bad', price: 0, handler: () => Promise.resolve({ type: 7 } as never) };
    const provider = createAcmpProvider({ capabilities: [bad] });
    expect(
      errorCode(
        await collect(provider.invoke(buildInvokeParams({ capability: 'bad' }), { canStream: true })),
      ),
    ).toBe(-33099);
  });

  it('fails running tasks with -33099 on close', async () => {
    const echo = probeCapability('echo');
    const provider = createAcmpProvider({ capabilities: [echo] });
    const pending = collect(provider.invoke(buildInvokeParams(), { canStream: true }));
    await vi.waitFor(() => expect(echo.runs).toBe(1));
    await provider.close();
    expect(errorCode(await pending)).toBe(-33099);
  });
});

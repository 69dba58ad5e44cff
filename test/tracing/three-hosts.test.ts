import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { ESCROW_METHOD } from '../../src/acmp/escrow/constants.js';
import { escrowHost, escrowWithPushHook } from '../escrow/helpers.js';
import { threeAgents } from './agents.js';
import { startWebhook } from '../helpers/webhook.js';
import { cleanup } from '../helpers/host.js';
import { callsTo, installTestTracing, onlySpan, parentOf, underRootSpan } from '../helpers/tracing.js';

/*
 * One trace across three real hosts in one process (docs/operations.md "Tracing"): a buyer application's
 * span → the provider's server span → the escrow agent's server span, with the provider's execution and
 * the stores' commits as children. Spans reach an in-memory exporter through the host's own set-up.
 */

const exporter = installTestTracing();
afterEach(cleanup);

const INPUT = { type: 'text', data: 'Revenue grew 12% YoY.' } as const;

describe('one trace: buyer → provider → escrow agent', () => {
  it('shares one trace id, links each hop to its caller and carries traceparent to the escrow agent', async () => {
    const { buyer, escrowId, outbound, escrowUrl } = await threeAgents();
    exporter.reset();
    outbound.length = 0;
    let taskId = '';
    const root = await underRootSpan(async () => {
      const result = await buyer.invoke({
        capability: 'sentiment-analysis',
        input: INPUT,
        max_price_cu: 0.005,
        escrow_id: escrowId,
      });
      taskId = result.task_id;
    });
    const traceId = root.spanContext().traceId;
    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));

    const atProvider = onlySpan(spans, 'SendStreamingMessage');
    expect(atProvider.kind).toBe(SpanKind.SERVER);
    expect(parentOf(atProvider)).toBe(root.spanContext().spanId);
    expect(atProvider.attributes).toMatchObject({
      'a2a.method.name': 'SendStreamingMessage',
      'a2a.task.id': taskId,
      'a2a.task.state': 'completed',
    });
    expect(atProvider.attributes['a2a.message.id']).toMatch(/^msg_/);
    expect(atProvider.attributes['gen_ai.conversation.id']).toMatch(/^ctx_/);

    // The provider verifies the escrow with the agent while it admits the invoke.
    const atEscrow = onlySpan(spans, 'SendMessage');
    expect(atEscrow.kind).toBe(SpanKind.SERVER);
    expect(parentOf(atEscrow)).toBe(atProvider.spanContext().spanId);
    const toEscrow = callsTo(outbound, escrowUrl);
    expect(toEscrow.length).toBeGreaterThan(0);
    for (const call of toEscrow)
      expect(call.traceparent).toBe(`00-${traceId}-${atProvider.spanContext().spanId}-01`);

    const execution = onlySpan(spans, 'acmp.execute');
    expect(parentOf(execution)).toBe(atProvider.spanContext().spanId);
    expect(execution.attributes).toMatchObject({
      'acmp.capability': 'sentiment-analysis',
      'acmp.task.id': taskId,
      'acmp.outcome': 'result',
    });
    expect(parentOf(onlySpan(spans, 'store.commit acmp_claim'))).toBe(atProvider.spanContext().spanId);
    const finish = onlySpan(spans, 'store.commit acmp_outcome');
    expect(parentOf(finish)).toBe(execution.spanContext().spanId);
    expect(finish.attributes).toEqual({
      'db.operation.name': 'acmp_outcome',
      'db.system.name': 'sqlite',
      // Outcomes are group-committed (src/storage/acmp/acmp-task-commits.ts): one invoke, a batch of one.
      'db.operation.batch.size': 1,
    });
    expect(parentOf(onlySpan(spans, 'store.commit escrow'))).toBe(atEscrow.spanContext().spanId);
    expect(spans.every((s) => s.status.code !== SpanStatusCode.ERROR)).toBe(true);
  });

  it('marks a refused invoke ERROR with its ACMP code, and no payload in any attribute', async () => {
    // An escrow bound to another provider: refused at admission (-33005), before any task runs.
    const { buyer, escrowId } = await threeAgents({ boundTo: 'agent:mallory' });
    exporter.reset();
    await underRootSpan(async () => {
      await expect(
        buyer.invoke({
          capability: 'sentiment-analysis',
          input: INPUT,
          max_price_cu: 0.005,
          escrow_id: escrowId,
        }),
      ).rejects.toMatchObject({ code: -33005 });
    });
    const spans = exporter.getFinishedSpans();
    const atProvider = onlySpan(spans, 'SendStreamingMessage');
    expect(atProvider.status.code).toBe(SpanStatusCode.ERROR);
    expect(atProvider.status.message).toBeUndefined();
    expect(atProvider.attributes['acmp.error.code']).toBe(-33005);
    expect(spans.some((s) => s.name === 'acmp.execute')).toBe(false);
    const text = JSON.stringify(spans.map((s) => s.attributes));
    expect(text).not.toContain('Revenue');
  });
});

describe('push delivery', () => {
  it('carries the trace of the call whose change it reports', async () => {
    const hook = await startWebhook();
    const agent = await escrowHost({ pushAllow: [hook.origin] });
    await agent.credit('agent:buyer', '1');
    const escrowId = await escrowWithPushHook(agent, hook.url);
    const provider = await agent.client('provider');
    exporter.reset();
    const root = await underRootSpan(() =>
      provider.call(ESCROW_METHOD.claim, {
        op_ref: 'c',
        escrow_id: escrowId,
        amount_cu: 0.002,
        task_id: 'task_1',
        proof: {},
      }),
    );
    const [post] = await hook.received(1);
    const traceparent = String(post!.headers.traceparent);
    const atEscrow = onlySpan(exporter.getFinishedSpans(), 'SendMessage');
    expect(traceparent).toMatch(new RegExp(`^00-${root.spanContext().traceId}-[0-9a-f]{16}-01$`));
    expect(atEscrow.spanContext().traceId).toBe(root.spanContext().traceId);
  });
});

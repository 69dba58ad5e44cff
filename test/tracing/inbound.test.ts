import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/connect/acmp-buyer.js';
import { createJsonLogger } from '../../src/shared/logger.js';
import { acmpHost, buyerOptions, jsonRpcUrl } from '../acmp/helpers.js';
import { cleanup, onCleanup } from '../helpers/host.js';
import { installTestTracing, onlySpan, parentOf, underRootSpan } from '../helpers/tracing.js';

/*
 * Inbound trace context (W3C Trace Context §3) on each binding the host serves, and trace ids in the
 * JSON log lines (docs/operations.md "Tracing").
 */

const exporter = installTestTracing();
afterEach(cleanup);

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const SENTIMENT = {
  capability: 'sentiment-analysis',
  input: { type: 'text', data: 'Revenue grew 12% YoY.' },
  max_price_cu: 0.005,
} as const;

describe('an inbound traceparent is honoured', () => {
  it('JSON-RPC: the server span continues the caller’s trace and keeps its tracestate', async () => {
    const host = await acmpHost();
    exporter.reset();
    const res = await fetch(jsonRpcUrl(host), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'a2a-version': '1.0',
        traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
        tracestate: 'vendor=opaque',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'task_missing' } }),
    });
    expect(((await res.json()) as { error?: unknown }).error).toBeDefined();
    const span = onlySpan(exporter.getFinishedSpans(), 'GetTask');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(span)).toBe(PARENT_ID);
    expect(span.spanContext().traceState?.serialize()).toBe('vendor=opaque');
    expect(span.attributes).toMatchObject({ 'a2a.method.name': 'GetTask', 'a2a.task.id': 'task_missing' });
    // An unknown task: status ERROR with the A2A reason, and no message text.
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(span.attributes['error.type']).toBe('TASK_NOT_FOUND');
  });

  it('HTTP+JSON: the same, from the REST request headers', async () => {
    const host = await acmpHost();
    exporter.reset();
    const res = await fetch(`${host.url}/a2a/rest/tasks/task_missing`, {
      headers: { 'a2a-version': '1.0', traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
    });
    expect(res.status).toBe(404);
    const span = onlySpan(exporter.getFinishedSpans(), 'GetTask');
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(span)).toBe(PARENT_ID);
  });

  it('a malformed traceparent starts a new trace instead', async () => {
    const host = await acmpHost();
    exporter.reset();
    await fetch(jsonRpcUrl(host), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', traceparent: '00-zz-yy-01' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'task_missing' } }),
    });
    const span = onlySpan(exporter.getFinishedSpans(), 'GetTask');
    expect(parentOf(span)).toBeUndefined();
    expect(span.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('gRPC: the metadata carries the trace from the buyer to the server span', async () => {
    const host = await acmpHost({ transport: 'grpc' });
    const buyer = await createAcmpBuyer(buyerOptions(host));
    onCleanup(() => buyer.close());
    exporter.reset();
    const root = await underRootSpan(() => buyer.invoke(SENTIMENT));
    const span = onlySpan(exporter.getFinishedSpans(), 'SendStreamingMessage');
    expect(span.spanContext().traceId).toBe(root.spanContext().traceId);
    expect(parentOf(span)).toBe(root.spanContext().spanId);
    expect(span.attributes['a2a.task.state']).toBe('completed');
  });

  it('MCP: the HTTP request’s trace is the parent of the call’s span, named after the method', async () => {
    const host = await acmpHost();
    const buyer = await createAcmpBuyer({ agentUrl: host.url, prefer: ['mcp'] });
    onCleanup(() => buyer.close());
    exporter.reset();
    const root = await underRootSpan(() => buyer.invoke(SENTIMENT));
    const spans = exporter.getFinishedSpans();
    const span = onlySpan(spans, 'acmp/invoke');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(parentOf(span)).toBe(root.spanContext().spanId);
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'acmp/invoke',
      'acmp.capability': 'sentiment-analysis',
    });
    expect(parentOf(onlySpan(spans, 'acmp.execute'))).toBe(span.spanContext().spanId);
  });
});

describe('log lines carry the active span’s ids', () => {
  it('writes trace_id and span_id inside a recording span, nothing outside', async () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ write: (line) => lines.push(line), now: () => 0 });
    logger.info('outside');
    const root = await underRootSpan(() => {
      logger.info('inside', { task_id: 't1' });
      return Promise.resolve();
    });
    const [outside, inside] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(outside).toEqual({ time: '1970-01-01T00:00:00.000Z', level: 'info', event: 'outside' });
    expect(inside).toEqual({
      task_id: 't1',
      time: '1970-01-01T00:00:00.000Z',
      level: 'info',
      event: 'inside',
      trace_id: root.spanContext().traceId,
      span_id: root.spanContext().spanId,
    });
  });

  it('lets no field forge the ids inside a span', async () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ write: (line) => lines.push(line) });
    const root = await underRootSpan(() => {
      logger.warn('x', { trace_id: 'forged', span_id: 'forged' });
      return Promise.resolve();
    });
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      trace_id: root.spanContext().traceId,
      span_id: root.spanContext().spanId,
    });
  });
});

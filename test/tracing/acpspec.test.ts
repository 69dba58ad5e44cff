import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { freshSnapshot, postEnvelope, startAcpHost, txId } from '../acpspec/helpers.js';
import { cleanup } from '../helpers/host.js';
import { installTestTracing, onlySpan, parentOf, underRootSpan } from '../helpers/tracing.js';

/* ACPspec over HTTPS (docs/operations.md "Tracing"): the sender's trace continues at the receiver. */

const exporter = installTestTracing();
afterEach(cleanup);

const ROUTE = 'POST /acp/v0.1/envelopes';

describe('an envelope POST', () => {
  it('continues the sender’s trace, with the receiver’s group commit as a child', async () => {
    const host = await startAcpHost();
    exporter.reset();
    const root = await underRootSpan(async () => {
      const { status } = await postEnvelope(host, JSON.stringify(freshSnapshot(txId('traced'))));
      expect(status).toBe(200);
    });
    const spans = exporter.getFinishedSpans();
    const ingest = onlySpan(spans, ROUTE);
    expect(ingest.kind).toBe(SpanKind.SERVER);
    expect(parentOf(ingest)).toBe(root.spanContext().spanId);
    const commit = onlySpan(spans, 'store.commit acp_ingest');
    expect(parentOf(commit)).toBe(ingest.spanContext().spanId);
    expect(commit.attributes).toEqual({
      'db.operation.name': 'acp_ingest',
      'db.system.name': 'sqlite',
      'db.operation.batch.size': 1,
    });
  });

  it('marks a refused envelope ERROR with its ACP code and no message text', async () => {
    const host = await startAcpHost();
    exporter.reset();
    const { status } = await postEnvelope(host, '{"not": "an envelope"');
    expect(status).toBe(400);
    const ingest = onlySpan(exporter.getFinishedSpans(), ROUTE);
    expect(ingest.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(ingest.attributes['acp.error.code']).toBe('ACP_SCHEMA_INVALID');
  });
});

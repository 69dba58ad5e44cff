import { propagation, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { startTracing } from '../../src/server/tracing.js';
import { createJsonLogger } from '../../src/shared/logger.js';
import { cleanup } from '../helpers/host.js';
import { callsTo } from '../helpers/tracing.js';
import { threeAgents } from './agents.js';

/*
 * Tracing off, the default (docs/operations.md "Tracing"): nothing is registered, no span records, no
 * trace-context header goes out and no log line carries trace ids. This file never installs tracing.
 */

afterEach(cleanup);

describe('tracing off', () => {
  it('registers nothing when the variables do not ask for traces', async () => {
    for (const env of [{}, { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }]) {
      const tracing = startTracing(env);
      expect(tracing.enabled).toBe(false);
      await tracing.shutdown();
    }
    const span = trace.getTracer('test').startSpan('probe');
    expect(span.isRecording()).toBe(false);
    span.end();
    expect(propagation.fields()).toEqual([]);
  });

  it('adds no traceparent on any hop of buyer → provider → escrow agent, and no ids to log lines', async () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ level: 'debug', write: (line) => lines.push(line) });
    const { buyer, escrowId, outbound, escrowUrl, providerUrl } = await threeAgents({ logger });
    const result = await buyer.invoke({
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'Revenue grew 12% YoY.' },
      max_price_cu: 0.005,
      escrow_id: escrowId,
    });
    expect(result.cost_cu).toBeGreaterThan(0);
    // The buyer's calls to both, and the provider's to the escrow agent.
    expect(callsTo(outbound, providerUrl).length).toBeGreaterThan(0);
    expect(callsTo(outbound, escrowUrl).length).toBeGreaterThan(2);
    expect(outbound.every((call) => call.traceparent === null)).toBe(true);
    expect(lines.some((line) => line.includes('trace_id') || line.includes('span_id'))).toBe(false);
  });
});

import { propagation, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer, type AcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import type { BuyerEscrow } from '../../src/a2a/acmp/buyer-escrow.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { startTracing } from '../../src/server/tracing.js';
import { createJsonLogger } from '../../src/shared/logger.js';
import { escrowHost, secret } from '../escrow/helpers.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { callsTo, recordOutboundHeaders } from '../helpers/tracing.js';

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
    const escrow = await escrowHost();
    await escrow.credit('agent:buyer', '1');
    const lines: string[] = [];
    const outbound = recordOutboundHeaders();
    const provider = await startTestHost({
      logger: createJsonLogger({ level: 'debug', write: (line) => lines.push(line) }),
      modules: [
        acmpModule({
          capabilities: demoCapabilities({ stepMs: 5 }),
          escrowAgent: {
            agentUrl: escrow.host.url,
            token: secret('provider'),
            payeeId: 'agent:provider',
            claimDelayMs: 60_000,
          },
        }),
      ],
    });
    const buyer = (await createAcmpBuyer({
      agentUrl: provider.url,
      escrow: { agentUrl: escrow.host.url, token: secret('buyer') },
    })) as AcmpBuyer & { escrow: BuyerEscrow };
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000);
    await buyer.escrow.bind(escrowId, 'agent:provider');
    const result = await buyer.invoke({
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'Revenue grew 12% YoY.' },
      max_price_cu: 0.005,
      escrow_id: escrowId,
    });
    expect(result.cost_cu).toBeGreaterThan(0);
    // The buyer's calls to both, and the provider's to the escrow agent.
    expect(callsTo(outbound, provider.url).length).toBeGreaterThan(0);
    expect(callsTo(outbound, escrow.host.url).length).toBeGreaterThan(2);
    expect(outbound.every((call) => call.traceparent === null)).toBe(true);
    expect(lines.some((line) => line.includes('trace_id') || line.includes('span_id'))).toBe(false);
  });
});

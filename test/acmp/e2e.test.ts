import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { demoCapabilities } from '../../src/acmp/demo-capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { cleanup, startTestHost } from '../helpers/host.js';

afterEach(cleanup);

describe('ACMP over A2A end to end', () => {
  it('invokes sentiment-analysis and verifies the proof', async () => {
    const host = await startTestHost({ modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 5 }), heartbeatIntervalMs: 100 })] });
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    const result = await buyer.invoke({
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'Revenue grew 12% YoY.' },
      max_price_cu: 0.005,
      proof_method: 'result-hash',
    });
    expect(result.cost_cu).toBeLessThanOrEqual(0.005);
    expect(result.output).toBeDefined();
  });

  it('streams summarize chunks', async () => {
    const host = await startTestHost({ modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 5 }), heartbeatIntervalMs: 100 })] });
    const buyer = await createAcmpBuyer({ agentUrl: host.url, transport: 'HTTP+JSON' });
    const kinds: string[] = [];
    for await (const ev of buyer.stream({
      capability: 'summarize',
      input: { type: 'text', data: 'First sentence here. Second one is longer and matters more. Third closes it. Fourth adds detail.' },
      max_price_cu: 1,
      stream: true,
      proof_method: 'result-hash',
    })) {
      kinds.push(ev.kind);
    }
    expect(kinds.filter((k) => k === 'chunk').length).toBeGreaterThan(0);
    expect(kinds.at(-1)).toBe('result');
  });
});

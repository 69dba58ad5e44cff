import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { cleanup } from '../helpers/host.js';
import { A2A_TRANSPORTS } from '../helpers/transports.js';
import { acmpHost, buyerOptions } from './helpers.js';

afterEach(cleanup);

describe.each(A2A_TRANSPORTS)('ACMP over A2A end to end (%s)', (transport) => {
  it('invokes sentiment-analysis and verifies the proof', async () => {
    const host = await acmpHost({ transport });
    const buyer = await createAcmpBuyer(buyerOptions(host));
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
    const host = await acmpHost({ transport });
    // Over the HTTP side this one takes HTTP+JSON, so the third transport is covered too.
    const buyer = await createAcmpBuyer({
      agentUrl: host.url,
      transport: transport === 'grpc' ? 'GRPC' : 'HTTP+JSON',
    });
    const kinds: string[] = [];
    for await (const ev of buyer.stream({
      capability: 'summarize',
      input: {
        type: 'text',
        data: 'First sentence here. Second one is longer and matters more. Third closes it. Fourth adds detail.',
      },
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

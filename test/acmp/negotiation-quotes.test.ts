import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer, type AcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import type { LogFields, Logger } from '../../src/shared/logger.js';
import { cleanup, startTestHost } from '../helpers/host.js';

afterEach(cleanup);

const TOKEN = 'agent-a-secret-0123456789';

/** A logger that keeps what it is told. */
function recordingLogger(): Logger & { lines: { level: string; event: string; fields?: LogFields }[] } {
  const lines: { level: string; event: string; fields?: LogFields }[] = [];
  const at =
    (level: string) =>
    (event: string, fields?: LogFields): void =>
      void lines.push({ level, event, ...(fields ? { fields } : {}) });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Priced by the input's value, which no size estimate tells: it cannot be quoted without the input. */
const byValue: AcmpCapability = {
  id: 'by-value',
  price: (input) => {
    if (typeof input.data !== 'number') throw new TypeError('a number, please');
    return input.data / 1000;
  },
  handler: (input) => Promise.resolve(input),
};

async function host(): Promise<{ buyer: AcmpBuyer; logger: ReturnType<typeof recordingLogger> }> {
  const logger = recordingLogger();
  const started = await startTestHost({
    flags: { token: [`a=${TOKEN}`] },
    modules: [acmpModule({ capabilities: [...demoCapabilities({ stepMs: 1 }), byValue], negotiation: true })],
    logger,
  });
  return { buyer: await createAcmpBuyer({ agentUrl: started.url, token: TOKEN, retries: 0 }), logger };
}

async function refusal(work: Promise<unknown>): Promise<{ code: number; data: unknown }> {
  try {
    await work;
  } catch (error) {
    if (error instanceof AcmpError) return { code: error.code, data: error.data };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('acmp/offerRequest answers every listed capability (L6 §2.1)', () => {
  it('quotes every demo capability, slow-count included, and the quote can be executed', async () => {
    const { buyer } = await host();
    for (const { id: capability } of demoCapabilities()) {
      const offer = await buyer.quote({ capability });
      expect(offer).toMatchObject({ capability, price_cu: expect.any(Number) as number });
    }
    const agreement = await buyer.negotiate({ capability: 'slow-count' });
    const result = await buyer.invoke({ agreement, input: { type: 'json', data: { n: 20 } } });
    expect(result.cost_cu).toBe(agreement.offer.price_cu);
  });

  it('refuses an input_tokens_est beyond the quotable range with -32602, not -33099', async () => {
    const { buyer } = await host();
    const answer = await refusal(buyer.quote({ capability: 'summarize', input_tokens_est: 2 ** 27 }));
    expect(answer).toMatchObject({
      code: -32602,
      data: { reason: 'input_tokens_est_out_of_range', max: expect.any(Number) as number },
    });
    const max = (answer.data as { max: number }).max;
    expect((await buyer.quote({ capability: 'summarize', input_tokens_est: max })).input_tokens_max).toBe(
      Math.ceil(max * 1.1),
    );
  });

  it('refuses a capability its price cannot quote with -33007 not_quotable, and logs the cause', async () => {
    const { buyer, logger } = await host();
    expect(await refusal(buyer.quote({ capability: 'by-value' }))).toEqual({
      code: -33007,
      data: { capability: 'by-value', reason: 'not_quotable' },
    });
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        event: 'acmp.quote_refused',
        fields: expect.objectContaining({ capability: 'by-value', error_name: 'TypeError' }) as LogFields,
      }),
    );
  });
});

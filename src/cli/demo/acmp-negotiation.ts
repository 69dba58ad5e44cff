import { z } from 'zod';
import { createAcmpBuyer } from '../../a2a/acmp/buyer.js';
import { createA2AClient } from '../../a2a/client.js';
import { taskStateName } from '../../a2a/part-codec.js';
import { SESSION_EXTENSION_URI } from '../../acmp/wire/constants.js';
import { verifyProof } from '../../acmp/wire/proof.js';
import { expectShape, expectThat } from './expect.js';
import type { DemoScenario } from './scenarios.js';

const NOTE = 'Quarterly revenue grew strongly. Costs fell. The outlook improved in every region.';

/** The session's task metadata under the session extension (docs/acmp-negotiation.md): its phase. */
const SessionMetadataSchema = z.looseObject({ phase: z.string() });

/**
 * Layer 6 negotiated purchases: a flat quote → accept → invoke at the agreed price, then a session (our
 * extension) where the buyer counters, accepts the revised offer and invokes under it by referenceTaskIds.
 */
export const acmpNegotiationScenario: DemoScenario = {
  title:
    'ACMP negotiation: flat quote and accept, then a session with a counter-offer, each followed by the invoke',
  async run(ctx) {
    const buyer = await createAcmpBuyer({ agentUrl: ctx.url, caCert: ctx.caCert });
    const input = { type: 'text', data: NOTE };
    const flat = await buyer.negotiate({
      capability: 'sentiment-analysis',
      max_price_cu: 0.005,
      proof_method: 'result-hash',
      input,
    });
    ctx.say(
      `   flat: acmp/offerRequest → offer ${flat.offer.price_cu} CU valid until ${new Date(flat.offer.valid_until_ms).toISOString()}; acmp/accept → Ack`,
    );
    const sentiment = await buyer.invoke({ agreement: flat });
    expectThat(sentiment.cost_cu === flat.ack.price_cu, 'the agreed price to be charged');
    ctx.say(
      `   invoke under the agreement → ${JSON.stringify(sentiment.output?.data)} for ${sentiment.cost_cu} CU (the agreed price)`,
    );

    const rounds: string[] = [];
    const session = await buyer.negotiate({
      capability: 'summarize',
      max_price_cu: 0.01,
      proof_method: 'result-hash',
      input,
      counter: (offer, context) => {
        rounds.push(
          `round ${context.round}: ${offer.price_cu} CU${context.declined ? ' (counter declined)' : ''}`,
        );
        return offer.price_cu > 0.0009 ? { price_cu: 0.0009 } : 'accept';
      },
    });
    expectThat(session.session !== undefined, 'a session-mode agreement');
    ctx.say(
      `   session ${session.session?.taskId}: ${rounds.join(' → ')} → accepted at ${session.ack.price_cu} CU`,
    );
    const client = await createA2AClient(buyer.card, { caCert: ctx.caCert });
    const task = await client.getTask({ tenant: '', id: session.session.taskId, historyLength: undefined });
    const { phase } = expectShape(
      SessionMetadataSchema,
      task.metadata?.[SESSION_EXTENSION_URI],
      'a session phase',
    );
    ctx.say(
      `   GetTask → A2A task ${taskStateName(task.status?.state)} (phase "${phase}" under ${SESSION_EXTENSION_URI}), ${task.history.length} messages`,
    );
    const summary = await buyer.invoke({ agreement: session });
    expectThat(summary.cost_cu === session.ack.price_cu, 'the negotiated price to be charged');
    expectThat(summary.output !== undefined, 'the result to carry an output');
    const check = verifyProof(summary.proof, { method: 'result-hash', output: summary.output, input });
    expectThat(check.ok, 'the result-hash proof to verify');
    ctx.say(
      `   invoke with referenceTaskIds [${session.session?.taskId}] → ${summary.cost_cu} CU, proof verified`,
    );
  },
};

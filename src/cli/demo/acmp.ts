import { z } from 'zod';
import { a2aTaskIds, createA2AAcmpTransport, createAcmpBuyer, type AcmpBuyer } from '../../a2a/acmp/buyer.js';
import { acmpRootOf } from '../../a2a/acmp-part.js';
import { createA2AClient } from '../../a2a/client.js';
import { taskStateName } from '../../a2a/part-codec.js';
import { ACMP_CODE, isAcmpError } from '../../acmp/wire/errors.js';
import type { AcmpResult, InvokeParams, Payload } from '../../acmp/wire/task-messages.js';
import { verifyProof } from '../../acmp/wire/proof.js';
import { expectShape, expectThat } from './expect.js';
import type { DemoContext, DemoScenario } from './scenarios.js';

const REPORT =
  'Revenue grew 12% year over year. The board met on Tuesday in the new office. Margins improved in every ' +
  'region thanks to strong demand. Costs declined slightly. Guidance for next year was raised.';

/** Card → invoke → streamed invoke → heartbeats → budget rejection → cancel, each proof verified. */
export const acmpScenario: DemoScenario = {
  title: 'ACMP over A2A: buy compute — card, invoke, stream, heartbeats, budget, cancel, proof',
  async run(ctx) {
    const buyer = await createAcmpBuyer({ agentUrl: ctx.url, caCert: ctx.caCert });
    const { features, emits } = buyer.capabilityObject;
    ctx.say(
      `   card: ACMP ${buyer.capabilityObject.version} provider, emits [${emits.join(', ')}], heartbeat ${String(features.heartbeat_interval_ms)} ms`,
    );
    ctx.say(
      `   skills: ${buyer.card.skills
        .filter((s) => s.tags.includes('acmp'))
        .map((s) => s.id)
        .join(', ')}`,
    );

    const sentiment = await buyer.invoke({
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'Revenue grew 12% YoY.' },
      max_price_cu: 0.005,
      proof_method: 'result-hash',
    });
    ctx.say(
      `   invoke sentiment-analysis → ${JSON.stringify(sentiment.output?.data)} for ${sentiment.cost_cu} CU (max 0.005)`,
    );
    sayProof(ctx, sentiment, 'Revenue grew 12% YoY.');

    await streamedSummary(ctx, buyer);
    await heartbeats(ctx, buyer);
    await budgetRejection(ctx, buyer);
    await cancel(ctx, buyer);
  },
};

function sayProof(ctx: DemoContext, result: AcmpResult, input: string): void {
  expectThat(result.output !== undefined, 'the result to carry an output');
  const check = verifyProof(result.proof, {
    method: 'result-hash',
    output: result.output,
    input: { type: 'text', data: input },
  });
  expectThat(check.ok, 'the result-hash proof to verify');
  ctx.say(`   proof result-hash verified: ${String(result.proof?.hash).slice(0, 23)}…`);
}

async function streamedSummary(ctx: DemoContext, buyer: AcmpBuyer): Promise<void> {
  const params = {
    capability: 'summarize',
    input: { type: 'text', data: REPORT },
    max_price_cu: 0.01,
    stream: true,
    proof_method: 'result-hash',
  };
  let chunks = 0;
  for await (const event of buyer.stream(params)) {
    if (event.kind === 'chunk') {
      chunks += 1;
      ctx.say(
        `   acmp/streamChunk seq ${event.params.seq}${event.params.final === true ? ' (final)' : ''}: "${textOf(event.params.chunk.data)}"`,
      );
    }
    if (event.kind === 'result') {
      expectThat(
        event.result.output_streamed === true && event.result.output === undefined,
        'a streamed result without output',
      );
      ctx.say(
        `   acmp_result output_streamed=true, ${chunks} chunks reassembled, ${event.result.cost_cu} CU`,
      );
      sayProof(ctx, { ...event.result, output: event.output }, REPORT);
    }
  }
}

async function heartbeats(ctx: DemoContext, buyer: AcmpBuyer): Promise<void> {
  let beats = 0;
  for await (const event of buyer.stream({
    capability: 'slow-count',
    input: { type: 'json', data: { n: 3 } },
    max_price_cu: 0.01,
  })) {
    if (event.kind === 'heartbeat') {
      beats += 1;
      ctx.say(
        `   acmp/heartbeat progress ${Math.round((event.params.progress ?? 0) * 100)}% "${event.params.detail ?? ''}"`,
      );
    }
    if (event.kind === 'result') ctx.say(`   slow-count → ${JSON.stringify(event.output.data)}`);
  }
  expectThat(beats >= 3, 'a heartbeat per step');
}

/** The `data` of a -33001 refusal (Layer 1 §3.1): the lowest price the provider would accept. */
const BudgetDataSchema = z.looseObject({ min_price_cu: z.number() });

async function budgetRejection(ctx: DemoContext, buyer: AcmpBuyer): Promise<void> {
  try {
    await buyer.invoke({
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'Too cheap.' },
      max_price_cu: 0.0001,
    });
    expectThat(false, 'a budget rejection');
  } catch (error) {
    expectThat(isAcmpError(error, ACMP_CODE.budgetExceeded), 'error -33001');
    const data = expectShape(BudgetDataSchema, error.data, 'the -33001 data to name min_price_cu');
    ctx.say(`   max_price_cu 0.0001 → acmp_error -33001 budget exceeded (min_price_cu ${data.min_price_cu})`);
  }
}

async function cancel(ctx: DemoContext, buyer: AcmpBuyer): Promise<void> {
  const client = await createA2AClient(buyer.card, { caCert: ctx.caCert });
  const params: Omit<InvokeParams, 'task_id'> & { task_id: string } = {
    task_id: a2aTaskIds.newId('task'),
    capability: 'slow-count',
    input: { type: 'json', data: { n: 1000 } } satisfies Payload,
    max_price_cu: 0.5,
  };
  // The cancel runs while the stream is read; its failure is kept and reported after, never left unhandled.
  let cancelled: Promise<unknown> | undefined;
  try {
    for await (const event of buyer.stream(params)) {
      if (event.kind === 'heartbeat' && !cancelled) {
        ctx.say(`   slow-count to 1000 running (${event.params.detail ?? ''}); sending acmp/cancel`);
        cancelled = createA2AAcmpTransport(client)
          .cancel({ task_id: params.task_id, reason: 'demo: changed my mind' })
          .catch((error: unknown) => error);
      }
    }
    expectThat(false, 'the invoke to be cancelled');
  } catch (error) {
    expectThat(isAcmpError(error, ACMP_CODE.cancelled), 'error -33004');
    ctx.say('   invoke answered with acmp_error -33004 cancelled');
  }
  const cancelFailure = await cancelled;
  if (cancelFailure !== undefined)
    throw cancelFailure instanceof Error ? cancelFailure : new Error('acmp/cancel failed');
  const task = await client.getTask({ tenant: '', id: params.task_id, historyLength: undefined });
  const root = acmpRootOf(task.status?.message);
  expectThat(
    root?.kind === 'error' && root.error.code === ACMP_CODE.cancelled,
    'GetTask to show the -33004 payload',
  );
  ctx.say(
    `   GetTask → A2A task ${taskStateName(task.status?.state)} (ACMP errors stay in the payload), acmp_error -33004`,
  );
}

function textOf(data: unknown): string {
  return typeof data === 'string' ? data.trim() : JSON.stringify(data);
}

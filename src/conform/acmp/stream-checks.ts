import { ACMP_METHOD } from '../../acmp/wire/constants.js';
import { ACMP_CODE } from '../../acmp/wire/errors.js';
import { PayloadSchema, type Payload } from '../../acmp/wire/task-messages.js';
import { assembleChunks, resultHash } from '../../acmp/wire/proof.js';
import { canonicalJson } from '../../shared/jcs.js';
import { isJsonObject } from '../../shared/json.js';
import { fail, pass, skip, type Check, type CheckOutcome } from '../check.js';
import { agentRoots, brief, finalAnswer, taskOf } from './inspect.js';
import { features } from './plan.js';
import { repeatProbe, streamProbe, type InvokeProbe } from './probes.js';
import { perTransport, type WireCheck } from './transports.js';
import type { WireTransport } from './wire.js';

/**
 * The checks of the paid streaming invoke (seed 000 §3.2, Layer 1 §3.2, §3.5, §3.6, Layer 3 §3.1) and
 * of its repeat (Layer 1 §3.1.1). Each skips when the budget cannot pay for the invoke.
 */

type Json = Record<string, unknown>;

/** The paid invoke's successful result, or the outcome to report when there is none. */
async function paidResult(
  ctx: Parameters<Check['run']>[0],
  t: WireTransport,
): Promise<{ probe: InvokeProbe; result: Json } | CheckOutcome> {
  const probe = await streamProbe(ctx, t);
  if (typeof probe === 'string') return skip(probe);
  const answer = finalAnswer(probe.exchange);
  if (answer?.result) return { probe, result: answer.result };
  if (answer?.error) return skip(`the paid invoke ended with acmp_error ${brief(answer.error)}`);
  return fail(`the paid invoke gave no final ACMP answer: ${brief(probe.exchange.frames.at(-1)?.body)}`);
}

const isOutcome = (v: object): v is CheckOutcome => 'status' in v;

/** Problems of the stream's order: chunks, heartbeats, then exactly one final answer, last. */
function orderProblems(probe: InvokeProbe): string[] {
  const problems: string[] = [];
  // Over HTTP the stream is SSE; over gRPC it is the server stream the service definition declares.
  const sse = probe.exchange.contentType.startsWith('text/event-stream');
  if (probe.plan.endpoint.transport !== 'GRPC' && !sse)
    problems.push(
      `SendStreamingMessage answered ${probe.exchange.contentType || 'no content type'}, not SSE`,
    );
  const roots = agentRoots(probe.exchange).map((r) => r.root);
  let seq = 0;
  let finalChunk = false;
  roots.forEach((root, i) => {
    const params = isJsonObject(root.params) ? root.params : {};
    if (root.acmp_method === ACMP_METHOD.streamChunk) {
      if (params.seq !== seq) problems.push(`chunk ${seq} has seq ${brief(params.seq)}`);
      if (finalChunk) problems.push(`chunk seq ${brief(params.seq)} after the final chunk`);
      finalChunk ||= params.final === true;
      seq++;
    }
    if ((root.acmp_result || root.acmp_error) && i !== roots.length - 1)
      problems.push('the final answer is not the last ACMP message of the stream');
    if (root.acmp_method !== undefined && params.task_id !== probe.params.task_id)
      problems.push(`${brief(root.acmp_method)} names task ${brief(params.task_id)}`);
  });
  const last = roots.at(-1);
  const result = isJsonObject(last?.acmp_result) ? last.acmp_result : undefined;
  if (!result && !last?.acmp_error) problems.push('the stream ended without acmp_result or acmp_error');
  if (result && probe.params.stream === true) {
    if (seq === 0) problems.push('stream: true was asked but no acmp/streamChunk came');
    else if (!finalChunk) problems.push('no chunk carried final: true');
    if (result.output_streamed === true && result.output !== undefined)
      problems.push('output_streamed: true with an output');
  }
  return problems;
}

const streamOrder: WireCheck = {
  id: 'acmp-a2a-stream',
  binding: 'acmp-a2a',
  title:
    'Chunks and heartbeats are data parts on the invoke’s own stream (SSE, gRPC), seq 0.. in order, then the result',
  spec: 'seed 000 §3.2 (line 89); Layer 1 §3.5 (line 334–336)',
  run: async (ctx, t) => {
    const probe = await streamProbe(ctx, t);
    if (typeof probe === 'string') return skip(probe);
    const problems = orderProblems(probe);
    return problems.length ? fail(problems.slice(0, 4).join('; ')) : pass();
  },
};

/** How much later than the advertised interval a heartbeat may come: the buyer's window (Layer 1 §3.6). */
const WINDOW_FACTOR = 3;

const liveness: WireCheck = {
  id: 'acmp-a2a-liveness',
  binding: 'acmp-a2a',
  title: `While the task runs, heartbeats come at least every ${WINDOW_FACTOR} × heartbeat_interval_ms`,
  spec: 'Layer 1 §3.6 (line 361–371), §1; seed 000 §3.2 (line 89)',
  run: async (ctx, t) => {
    const interval = features(ctx.card).heartbeat_interval_ms;
    if (typeof interval !== 'number') return skip('the card advertises no heartbeat_interval_ms');
    const probe = await streamProbe(ctx, t);
    if (typeof probe === 'string') return skip(probe);
    const frames = probe.exchange.frames;
    const start = frames.find((f) => taskOf(f)?.id === probe.params.task_id)?.atMs;
    const end = finalAnswer(probe.exchange)?.frame.atMs;
    if (start === undefined || end === undefined) return skip('the stream had no running task to watch');
    const beats = agentRoots(probe.exchange)
      .filter((r) => r.root.acmp_method === ACMP_METHOD.heartbeat)
      .map((r) => r.frame.atMs);
    const marks = [start, ...beats.filter((t) => t > start && t < end), end];
    const window = WINDOW_FACTOR * interval;
    for (let i = 1; i < marks.length; i++) {
      const gap = (marks[i] ?? 0) - (marks[i - 1] ?? 0);
      if (gap > window)
        return fail(
          `${gap} ms without a heartbeat (interval ${interval} ms, window ${window} ms; ${beats.length} heartbeats)`,
        );
    }
    return pass();
  },
};

/** The output a result stands for: its own, or the chunks assembled (docs/acmp-core.md "Chunk assembly"). */
function deliveredOutput(probe: InvokeProbe, result: Json): Payload | undefined {
  const own = PayloadSchema.safeParse(result.output);
  if (own.success) return own.data;
  const chunks = agentRoots(probe.exchange)
    .filter((r) => r.root.acmp_method === ACMP_METHOD.streamChunk)
    .map((r) => PayloadSchema.safeParse(isJsonObject(r.root.params) ? r.root.params.chunk : undefined))
    .flatMap((c) => (c.success ? [c.data] : []));
  return chunks.length ? assembleChunks(chunks) : undefined;
}

const proofRecomputed: WireCheck = {
  id: 'acmp-a2a-proof',
  binding: 'acmp-a2a',
  title:
    'The result-hash proof equals sha256 over the JCS of the delivered output (and input_hash of the input)',
  spec: 'Layer 3 §3.1 (RFC 8785 JCS); Layer 1 §3.2 (proof)',
  run: async (ctx, t) => {
    const paid = await paidResult(ctx, t);
    if (isOutcome(paid))
      return paid.status === 'skip' && /-33006/.test(paid.evidence ?? '')
        ? skip('result-hash unsupported (-33006)')
        : paid;
    const proof = isJsonObject(paid.result.proof) ? paid.result.proof : undefined;
    if (!proof) return fail('proof_method "result-hash" was requested but the result has no proof');
    if (proof.method !== 'result-hash') return fail(`proof.method is ${brief(proof.method)}`);
    const output = deliveredOutput(paid.probe, paid.result);
    if (!output) return fail('no output (nor chunks) to recompute the hash over');
    const expected = resultHash(output);
    if (proof.hash !== expected) return fail(`proof.hash ${brief(proof.hash)}, recomputed ${expected}`);
    const input = PayloadSchema.parse(paid.probe.params.input);
    if (proof.input_hash !== undefined && proof.input_hash !== resultHash(input))
      return fail(`proof.input_hash ${brief(proof.input_hash)}, recomputed ${resultHash(input)}`);
    return pass();
  },
};

const costCeiling: WireCheck = {
  id: 'acmp-a2a-cost',
  binding: 'acmp-a2a',
  title: 'The result’s cost_cu does not exceed the invoke’s max_price_cu',
  spec: 'Layer 1 §3.2 (cost_cu, line 235)',
  run: async (ctx, t) => {
    const paid = await paidResult(ctx, t);
    if (isOutcome(paid)) return paid;
    const cost = paid.result.cost_cu;
    const ceiling = paid.probe.params.max_price_cu as number;
    if (typeof cost !== 'number') return fail(`cost_cu is ${brief(cost)}`);
    return cost <= ceiling ? pass() : fail(`cost_cu ${cost} exceeds max_price_cu ${ceiling}`);
  },
};

const idempotent: WireCheck = {
  id: 'acmp-a2a-idempotent',
  binding: 'acmp-a2a',
  title: 'A repeated invoke with the same task_id returns the existing result without executing again',
  spec: 'Layer 1 §3.1.1 (line 185–192)',
  run: async (ctx, t) => {
    const probes = await repeatProbe(ctx, t);
    if (typeof probes === 'string') return skip(probes);
    const first = finalAnswer(probes.first.exchange);
    const again = finalAnswer(probes.again.exchange);
    if (!first) return skip('the first invoke gave no final answer');
    if (!again)
      return fail(`the repeat gave no final answer: ${brief(probes.again.exchange.frames[0]?.body)}`);
    const code = again.error?.code;
    if (code === ACMP_CODE.invalidParams) return fail(`the repeat was refused: ${brief(again.error)}`);
    const a = canonicalJson(first.result ?? first.error);
    const b = canonicalJson(again.result ?? again.error);
    return a === b
      ? pass()
      : fail(
          `first ${brief(first.result ?? first.error, 200)}, repeat ${brief(again.result ?? again.error, 200)}`,
        );
  },
};

/** The stream and repeat checks, in report order. */
export const streamChecks: readonly Check[] = [
  streamOrder,
  liveness,
  proofRecomputed,
  costCeiling,
  idempotent,
].flatMap(perTransport);

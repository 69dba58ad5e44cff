import { ACMP_CODE } from '../../acmp/wire/errors.js';
import { isJsonObject } from '../../shared/json.js';
import { fail, pass, skip, type Check, type CheckOutcome, type ConformContext } from '../check.js';
import { brief, finalAnswer, taskOf } from './inspect.js';
import { invokePlan } from './plan.js';
import { cancelProbe, refusalProbe, sendInvoke, TINY_PRICE_CU, type InvokeProbe } from './probes.js';
import { freshTaskId } from './plan.js';
import { perTransport, type WireCheck } from './transports.js';
import type { WireExchange, WireTransport } from './wire.js';

/**
 * The Layer 1 §3.3 codes the kit provokes without spending — every one is a refusal before any work —
 * and the binding's error placement rule (seed 000 §3.4).
 */

/** The ACMP error code an exchange ended with, or evidence of what it ended with instead. */
function errorCode(exchange: WireExchange): number | string {
  const answer = finalAnswer(exchange);
  if (typeof answer?.error?.code === 'number') return answer.error.code;
  const rpcError = exchange.frames[0]?.body.error;
  if (rpcError !== undefined)
    return `${exchange.status} with the error ${brief(rpcError)} instead of an acmp_error payload`;
  if (answer?.result) return `an acmp_result (the invoke ran): ${brief(answer.result)}`;
  return `${exchange.status}, no ACMP answer: ${brief(exchange.frames[0]?.body)}`;
}

function expectCode(probe: InvokeProbe, code: number): CheckOutcome {
  const got = errorCode(probe.exchange);
  if (got === code) return pass();
  return fail(typeof got === 'number' ? `acmp_error code ${got}, expected ${code}` : got);
}

/** A refusal probe with some params changed, or the reason it cannot run. */
async function refusedWith(
  ctx: ConformContext,
  t: WireTransport,
  extra: Record<string, unknown>,
): Promise<InvokeProbe | string> {
  const plan = invokePlan(ctx, t);
  if (typeof plan === 'string') return plan;
  const params = { task_id: freshTaskId(), capability: plan.capability, input: plan.input, ...extra };
  return sendInvoke(ctx, plan, { max_price_cu: TINY_PRICE_CU, ...params });
}

const budgetExceeded: WireCheck = {
  id: 'acmp-a2a-budget-exceeded',
  binding: 'acmp-a2a',
  title: `An invoke whose max_price_cu (${TINY_PRICE_CU}) is below the price is refused with -33001`,
  spec: 'Layer 1 §3.1 (max_price_cu), §3.3 (-33001)',
  run: async (ctx, t) => {
    const probe = await refusalProbe(ctx, t);
    return typeof probe === 'string' ? skip(probe) : expectCode(probe, ACMP_CODE.budgetExceeded);
  },
};

const capabilityNotFound: WireCheck = {
  id: 'acmp-a2a-capability-not-found',
  binding: 'acmp-a2a',
  title: 'An invoke of a capability the agent does not offer is refused with -33002',
  spec: 'Layer 1 §3.3 (-33002)',
  run: async (ctx, t) => {
    const probe = await refusedWith(ctx, t, { capability: `conform-no-such-capability-${freshTaskId()}` });
    return typeof probe === 'string' ? skip(probe) : expectCode(probe, ACMP_CODE.capabilityNotFound);
  },
};

const featureUnsupported: WireCheck = {
  id: 'acmp-a2a-input-stream-refused',
  binding: 'acmp-a2a',
  title: 'An invoke with input_stream: true is refused with -33007 (the binding has no input streaming)',
  spec: 'seed 000 §3.3 (line 93); Layer 1 §3.1 (input_stream), §3.3 (-33007)',
  run: async (ctx, t) => {
    const probe = await refusedWith(ctx, t, { input_stream: true, max_price_cu: TINY_PRICE_CU });
    return typeof probe === 'string' ? skip(probe) : expectCode(probe, ACMP_CODE.featureUnsupported);
  },
};

/** Problems with where an exchange put its ACMP error: JSON-RPC error, missing payload, task not completed. */
function placementProblems(label: string, exchange: WireExchange): string[] {
  const answer = finalAnswer(exchange);
  const rpcError = exchange.frames.find((f) => f.body.error !== undefined)?.body.error;
  if (rpcError !== undefined)
    return [`${label}: ${exchange.status} with the error ${brief(rpcError)}, not an acmp_error payload`];
  if (!answer?.error) return [];
  const state = answer.state ?? taskOf(answer.frame)?.state;
  if (state !== undefined && state !== 'TASK_STATE_COMPLETED' && state !== 'TASK_STATE_CANCELED')
    return [`${label}: the task carrying acmp_error ${String(answer.error.code)} is ${state}, not completed`];
  return [];
}

const errorInPayload: WireCheck = {
  id: 'acmp-a2a-error-in-payload',
  binding: 'acmp-a2a',
  title: 'An ACMP error travels as an acmp_error payload; a task carrying one is completed, never failed',
  spec: 'seed 000 §3.4 (line 97); §1 (line 44)',
  run: async (ctx, t) => {
    const refusal = await refusalProbe(ctx, t);
    if (typeof refusal === 'string') return skip(refusal);
    if (!finalAnswer(refusal.exchange)?.error && refusal.exchange.frames[0]?.body.error === undefined)
      return fail(`the -33001 refusal carried no acmp_error: ${brief(refusal.exchange.frames[0]?.body)}`);
    const problems = placementProblems('the -33001 refusal', refusal.exchange);
    // The cancelled invoke, when the budget ran it, is a task that ends in an ACMP error (-33004).
    const cancelled = await cancelProbe(ctx, t);
    if (typeof cancelled !== 'string')
      problems.push(...placementProblems('the cancelled invoke', cancelled.exchange));
    return problems.length ? fail(problems.join('; ')) : pass();
  },
};

const cancelHonoured: WireCheck = {
  id: 'acmp-a2a-cancel',
  binding: 'acmp-a2a',
  title: 'acmp/cancel on a running task ends its invoke with acmp_error -33004',
  spec: 'Layer 1 §3.7; seed 000 §1 (cancel is a request in a data part)',
  run: async (ctx, t) => {
    const probe = await cancelProbe(ctx, t);
    if (typeof probe === 'string') return skip(probe);
    const answer = finalAnswer(probe.exchange);
    if (!probe.cancel) return skip('the invoke finished before its task was seen; nothing to cancel');
    if (answer?.error?.code === ACMP_CODE.cancelled) return pass();
    // A result that came right after the cancel was answered lost a race, not the rule.
    const late = (probe.finalMs ?? 0) - (probe.cancelAckMs ?? 0) > 250;
    if (answer?.result && !late) return skip('the invoke finished as the cancel arrived');
    const refused = finalAnswer(probe.cancel)?.error ?? probe.cancel.frames[0]?.body.error;
    const what = answer?.result
      ? `ran to completion ${(probe.finalMs ?? 0) - (probe.cancelAckMs ?? 0)} ms after the cancel`
      : `ended with ${brief(answer?.error ?? probe.exchange.frames.at(-1)?.body)}`;
    return fail(`the invoke ${what}${isJsonObject(refused) ? `; cancel answered ${brief(refused)}` : ''}`);
  },
};

/** The error checks, in report order. */
export const errorChecks: readonly Check[] = [
  budgetExceeded,
  capabilityNotFound,
  featureUnsupported,
  errorInPayload,
  cancelHonoured,
].flatMap(perTransport);

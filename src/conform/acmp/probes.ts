import { ACMP_METHOD } from '../../acmp/wire/constants.js';
import { isJsonObject } from '../../shared/json.js';
import type { ConformContext } from '../check.js';
import { finalAnswer, taskOf } from './inspect.js';
import { acmpMessage, features, freshTaskId, invokePlan, type InvokePlan } from './plan.js';
import { callRpc, streamRpc, type WireExchange, type WireTransport } from './wire.js';

/**
 * The calls the ACMP checks judge, made once per run and shared (memoised per context): a refusal that
 * cannot spend, one paid streaming invoke, its repeat, and a cancelled invoke. A probe that cannot run
 * answers the reason instead, which the checks report as their skip.
 */

type Json = Record<string, unknown>;

/** A `max_price_cu` no real price is below: the invoke is refused with -33001 before any work. */
export const TINY_PRICE_CU = 1e-9;

const memo = new WeakMap<ConformContext, Map<string, Promise<unknown>>>();

function once<T>(ctx: ConformContext, key: string, run: () => Promise<T>): Promise<T> {
  // Keys name the probe and the transport it ran over.
  let cache = memo.get(ctx);
  if (!cache) memo.set(ctx, (cache = new Map<string, Promise<unknown>>()));
  let value = cache.get(key) as Promise<T> | undefined;
  if (!value) cache.set(key, (value = run()));
  return value;
}

/** An invoke the kit sent and what came back. */
export interface InvokeProbe {
  readonly plan: InvokePlan;
  readonly params: Json & { task_id: string };
  readonly exchange: WireExchange;
}

/** An invoke params object for the plan (fresh task id unless given). */
function invokeParams(plan: InvokePlan, extra: Json): Json & { task_id: string } {
  return { task_id: freshTaskId(), capability: plan.capability, input: plan.input, ...extra };
}

/** SendMessage of one invoke. */
export async function sendInvoke(
  ctx: ConformContext,
  plan: InvokePlan,
  params: Json & { task_id: string },
): Promise<InvokeProbe> {
  const message = acmpMessage({ acmp_method: ACMP_METHOD.invoke, params });
  const exchange = await callRpc(ctx, {
    endpoint: plan.endpoint,
    method: 'SendMessage',
    params: { message },
  });
  return { plan, params, exchange };
}

/** The -33001 refusal: an invoke whose `max_price_cu` is {@link TINY_PRICE_CU} (Layer 1 §3.1). */
export function refusalProbe(ctx: ConformContext, t: WireTransport): Promise<InvokeProbe | string> {
  return once(ctx, `refusal ${t}`, async () => {
    const plan = invokePlan(ctx, t);
    if (typeof plan === 'string') return plan;
    return sendInvoke(ctx, plan, invokeParams(plan, { max_price_cu: TINY_PRICE_CU }));
  });
}

/**
 * The price the kit reserves per paid invoke: the `min_price_cu` the agent named in its -33001 refusal
 * (Layer 1 §3.3), else the skill's fixed price. The invoke's `max_price_cu` is this price, so a conforming
 * agent cannot charge more (Layer 1 §3.2 `cost_cu`).
 */
async function pricePlan(
  ctx: ConformContext,
  t: WireTransport,
): Promise<{ plan: InvokePlan; priceCu: number } | string> {
  const refusal = await refusalProbe(ctx, t);
  if (typeof refusal === 'string') return refusal;
  const data = finalAnswer(refusal.exchange)?.error?.data;
  const named = isJsonObject(data) && typeof data.min_price_cu === 'number' ? data.min_price_cu : undefined;
  const priceCu = named ?? refusal.plan.statedPriceCu;
  if (priceCu === undefined || !(priceCu > 0))
    return 'the price is unknown (no min_price_cu in the -33001 refusal, no fixed price on the card)';
  return { plan: refusal.plan, priceCu };
}

/** Reserves one paid invoke, or says why not. */
async function paidPlan(
  ctx: ConformContext,
  t: WireTransport,
): Promise<{ plan: InvokePlan; priceCu: number } | string> {
  const priced = await pricePlan(ctx, t);
  if (typeof priced === 'string') return priced;
  if (!ctx.reserve(priced.priceCu))
    return `needs ${priced.priceCu} CU of budget (--max-spend) for a paid invoke of ${priced.plan.capability}`;
  return priced;
}

/**
 * One paid invoke over SendStreamingMessage, `stream: true` when the card advertises output streaming,
 * `proof_method: "result-hash"` (Layer 3 §3.1). Its transcript feeds the envelope, stream, liveness,
 * proof and cost checks.
 */
export function streamProbe(
  ctx: ConformContext,
  t: WireTransport,
): Promise<(InvokeProbe & { priceCu: number }) | string> {
  return once(ctx, `stream ${t}`, async () => {
    const paid = await paidPlan(ctx, t);
    if (typeof paid === 'string') return paid;
    const params = invokeParams(paid.plan, {
      max_price_cu: paid.priceCu,
      proof_method: 'result-hash',
      ...(features(ctx.card).output_streaming === true ? { stream: true } : {}),
    });
    const message = acmpMessage({ acmp_method: ACMP_METHOD.invoke, params });
    const exchange = await streamRpc(ctx, { endpoint: paid.plan.endpoint, params: { message } });
    return { plan: paid.plan, params, exchange, priceCu: paid.priceCu };
  });
}

/**
 * The same invoke again, same `task_id` and params, after the first finished (Layer 1 §3.1.1). Reserved
 * again: an agent that executes twice may bill twice.
 */
export function repeatProbe(
  ctx: ConformContext,
  t: WireTransport,
): Promise<{ first: InvokeProbe; again: InvokeProbe } | string> {
  return once(ctx, `repeat ${t}`, async () => {
    const first = await streamProbe(ctx, t);
    if (typeof first === 'string') return first;
    if (!ctx.reserve(first.priceCu)) return `needs another ${first.priceCu} CU of budget for the repeat`;
    // The repeat is a retry of the same call: over SendStreamingMessage, as the first was.
    const message = acmpMessage({ acmp_method: ACMP_METHOD.invoke, params: first.params });
    const exchange = await streamRpc(ctx, { endpoint: first.plan.endpoint, params: { message } });
    return { first, again: { plan: first.plan, params: first.params, exchange } };
  });
}

/** A streamed invoke cancelled in-band (`acmp/cancel`, Layer 1 §3.7) as soon as its task exists. */
export interface CancelProbe extends InvokeProbe {
  /** The cancel's own reply; absent when the invoke finished before the task was seen. */
  readonly cancel?: WireExchange;
  /** When the cancel was answered and when the invoke's final answer came (ms since the invoke). */
  readonly cancelAckMs?: number;
  readonly finalMs?: number;
}

export function cancelProbe(ctx: ConformContext, t: WireTransport): Promise<CancelProbe | string> {
  return once(ctx, `cancel ${t}`, async () => {
    const paid = await paidPlan(ctx, t);
    if (typeof paid === 'string') return paid;
    const params = invokeParams(paid.plan, { max_price_cu: paid.priceCu });
    const message = acmpMessage({ acmp_method: ACMP_METHOD.invoke, params });
    let cancelling: Promise<WireExchange> | undefined;
    let cancelAckMs: number | undefined;
    const started = Date.now();
    const exchange = await streamRpc(ctx, {
      endpoint: paid.plan.endpoint,
      params: { message },
      onFrame: (frame) => {
        if (cancelling || taskOf(frame)?.id !== params.task_id) return;
        const root = { acmp_method: ACMP_METHOD.cancel, params: { task_id: params.task_id } };
        cancelling = callRpc(ctx, {
          endpoint: paid.plan.endpoint,
          method: 'SendMessage',
          params: { message: acmpMessage(root) },
        }).finally(() => (cancelAckMs = Date.now() - started));
        cancelling.catch(() => undefined);
      },
    });
    const finalMs = Date.now() - started;
    const cancel = cancelling ? await cancelling.catch(() => undefined) : undefined;
    return {
      plan: paid.plan,
      params,
      exchange,
      finalMs,
      ...(cancel ? { cancel } : {}),
      ...(cancelAckMs !== undefined ? { cancelAckMs } : {}),
    };
  });
}

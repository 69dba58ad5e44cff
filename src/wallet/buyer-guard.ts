import type { AcmpBuyerCore, BuyerEvent, InvokeInput } from '../acmp/buyer/buyer.js';
import { ACMP_CODE, AcmpError } from '../acmp/wire/errors.js';
import type { AcmpResult } from '../acmp/wire/task-messages.js';
import { isLocalError, LocalError } from '../shared/errors.js';
import type { IdSource } from '../shared/ids.js';
import type { Wallet } from './wallet.js';

/**
 * The buyer core with every invoke passing through the wallet first (Layer 7 §6.2): its `max_price_cu`
 * is authorized for its task before anything is sent — counted as a direct spend, or, under an escrow
 * (`escrow_id`), checked against `per_task_max_cu` only (the lock counted the money). An invoke without
 * a price ceiling asks for an unbounded amount, which any configured limit refuses. The reservation
 * settles at the result's `cost_cu`, is voided when the provider refuses, and stays counted when the
 * outcome is unknown (a deadline, a lost connection).
 */
export function walletBuyerCore(
  core: AcmpBuyerCore,
  wallet: Wallet,
  options: { counterparty: string; ids: IdSource },
): AcmpBuyerCore {
  const guard = new InvokeGuard(core, wallet, options);
  return Object.freeze({
    invoke: (input: InvokeInput, o?: { signal?: AbortSignal }) => guard.invoke(input, o),
    stream: (input: InvokeInput, o?: { signal?: AbortSignal }) => guard.stream(input, o),
  });
}

class InvokeGuard {
  readonly #core: AcmpBuyerCore;
  readonly #wallet: Wallet;
  readonly #counterparty: string;
  readonly #ids: IdSource;

  constructor(core: AcmpBuyerCore, wallet: Wallet, options: { counterparty: string; ids: IdSource }) {
    this.#core = core;
    this.#wallet = wallet;
    this.#counterparty = options.counterparty;
    this.#ids = options.ids;
  }

  async invoke(input: InvokeInput, o?: { signal?: AbortSignal }): Promise<AcmpResult> {
    for await (const event of this.stream(input, o)) {
      if (event.kind === 'result') return { ...event.result, output: event.output };
    }
    throw new LocalError('INVALID_STATE', 'stream ended without a result');
  }

  async *stream(input: InvokeInput, o?: { signal?: AbortSignal }): AsyncGenerator<BuyerEvent> {
    const taskId = input.task_id ?? this.#ids.newId('task');
    const ceiling = typeof input.max_price_cu === 'number' ? input.max_price_cu : Number.POSITIVE_INFINITY;
    const ticket = await this.#wallet.authorize({
      kind: 'invoke',
      amount_cu: ceiling,
      counterparty: this.#counterparty,
      task_id: taskId,
      ...(typeof input.escrow_id === 'string' ? { escrow_id: input.escrow_id } : {}),
      ...(typeof input.preferred_tier === 'string' ? { tier: input.preferred_tier } : {}),
    });
    let settled = false;
    try {
      for await (const event of this.#core.stream({ ...input, task_id: taskId }, o)) {
        if (event.kind === 'result') {
          settled = true;
          await this.#wallet.settle(ticket, { ok: true, costCu: event.result.cost_cu });
        }
        yield event;
      }
    } catch (error) {
      if (!settled) {
        settled = true;
        await this.#wallet.settle(ticket, failure(error));
      }
      throw error;
    } finally {
      if (!settled) await this.#wallet.settle(ticket, { ok: false, definite: false, outcome: 'unknown' });
    }
  }
}

/** Errors after which the provider may have run (and charged for) the task. */
const MAY_HAVE_RUN: readonly number[] = [ACMP_CODE.timeout, ACMP_CODE.cancelled, ACMP_CODE.internal];

/** A provider's refusal (it answered: nothing was charged) voids the reservation; anything else may have run. */
function failure(error: unknown): { ok: false; definite: boolean; outcome: string } {
  if (error instanceof AcmpError && !MAY_HAVE_RUN.includes(error.code))
    return { ok: false, definite: true, outcome: `refused:${error.code}` };
  if (isLocalError(error, 'REFUSED') || isLocalError(error, 'SPEND_DENIED'))
    return { ok: false, definite: true, outcome: 'refused' };
  return { ok: false, definite: false, outcome: 'unknown' };
}

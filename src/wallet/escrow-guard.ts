import { z } from 'zod';
import { ESCROW_METHOD, isEscrowMethod, type EscrowMethod } from '../acmp/escrow/constants.js';
import { AcmpError } from '../acmp/wire/errors.js';
import { isLocalError, LocalError } from '../shared/errors.js';
import { isJsonObject, type JsonValue } from '../shared/json.js';
import type { Intent } from './store.js';
import type { SpendRequest, Wallet } from './wallet.js';

/** What the wallet needs of an escrow agent connection (the A2A escrow client is one). */
export interface EscrowCaller {
  call(
    method: EscrowMethod,
    params: Record<string, unknown>,
    options?: { signal?: AbortSignal },
  ): Promise<Record<string, JsonValue>>;
  status(escrowId: string, options?: { signal?: AbortSignal }): Promise<Record<string, JsonValue>>;
}

/** The params of a recorded operation as JSON, with the `op_ref` its record is keyed by (Layer 7 §6.5). */
const RecordedParamsSchema = z.object({ op_ref: z.string().min(1) }).catchall(z.json());

/**
 * Sends one Layer 4 request through the wallet — the one place every escrow operation of a
 * wallet-guarded buyer passes: a lock is authorized (and reserved) and a release checked against the
 * limits; every mutating message is recorded write-ahead with its `op_ref` before it is sent (Layer 7
 * §6.5), and its answer closes the record and appends the audit entry (§6.3). An answer that never came
 * (a crash, a deadline) leaves the record pending for {@link recoverEscrowOperations}.
 * @throws SpendDeniedError before anything is sent; the agent's errors as `send` throws them.
 */
export async function guardedEscrowCall(
  wallet: Wallet,
  to: { agent: string; caller: EscrowCaller },
  request: { method: EscrowMethod; params: Record<string, unknown>; signal?: AbortSignal },
): Promise<Record<string, JsonValue>> {
  const { method, params } = request;
  const o = request.signal ? { signal: request.signal } : undefined;
  if (method === ESCROW_METHOD.status) return to.caller.call(method, params, o);
  const parsed = RecordedParamsSchema.safeParse(JSON.parse(JSON.stringify(params)));
  if (!parsed.success)
    throw new LocalError('CONFIG_INVALID', 'a wallet-guarded escrow operation needs an op_ref');
  const json = parsed.data;
  const counterparty = str(json.payee_id) ?? to.agent;
  const spend = spendOf(method, json, counterparty);
  const intent = await wallet.begin({
    method,
    agent: to.agent,
    params: json,
    counterparty,
    taskId: str(json.task_id),
    ...(spend ? { spend } : {}),
  });
  return sendRecorded([wallet, intent], () => to.caller.call(method, json, o));
}

/** What a Layer 4 message spends: a lock counts, a release is checked per task; the rest spend nothing. */
function spendOf(
  method: EscrowMethod,
  params: Record<string, JsonValue>,
  counterparty: string,
): SpendRequest | undefined {
  const amount = typeof params.amount_cu === 'number' ? params.amount_cu : undefined;
  if (amount === undefined) return undefined;
  const common = {
    amount_cu: amount,
    counterparty,
    ...(typeof params.op_ref === 'string' ? { op_ref: params.op_ref } : {}),
    ...(typeof params.tier === 'string' ? { tier: params.tier } : {}),
  };
  if (method === ESCROW_METHOD.lock) return { ...common, kind: 'lock' };
  if (method === ESCROW_METHOD.release)
    return {
      ...common,
      kind: 'release',
      ...(typeof params.escrow_id === 'string' ? { escrow_id: params.escrow_id } : {}),
      ...(typeof params.task_id === 'string' ? { task_id: params.task_id } : {}),
    };
  return undefined;
}

/** Sends a recorded operation and records its answer; an unknown outcome leaves it pending. */
async function sendRecorded(
  [wallet, intent]: [Wallet, Intent],
  send: () => Promise<Record<string, JsonValue>>,
  how: 'answered' | 'recovered' = 'answered',
): Promise<Record<string, JsonValue>> {
  let result: Record<string, JsonValue>;
  try {
    result = await send();
  } catch (error) {
    const outcome = definiteOutcome(error);
    if (outcome !== undefined) await wallet.finish(intent, { ok: false, outcome }, how);
    throw error;
  }
  await wallet.finish(intent, { ok: true, result }, how);
  return result;
}

/**
 * The outcome of a failed send when the agent certainly answered it (its -35xxx or -326xx error, or a
 * refusal at the A2A level); undefined when the operation may have happened (no answer, a reply that
 * could not be read) — replaying its op_ref will tell.
 */
function definiteOutcome(error: unknown): string | undefined {
  if (error instanceof AcmpError) {
    const malformed = isJsonObject(error.data) && error.data.reason === 'escrow_reply_malformed';
    return malformed ? undefined : `refused:${error.code}`;
  }
  if (isLocalError(error, 'REFUSED')) return 'refused';
  return undefined;
}

/** One replayed operation and how it ended. */
export interface Replay {
  readonly opRef: string;
  readonly method: string;
  readonly escrowId: string | null;
  readonly outcome: 'done' | 'failed' | 'pending';
}

/**
 * Crash recovery (Layer 7 §6.5): for each pending operation at `agent`, re-reads the escrow's status
 * (when the operation names one) and re-sends the operation with the same `op_ref` and params — Layer 4
 * §3 makes the agent answer with the first execution's outcome instead of executing again. The answer
 * closes the record as a live answer would; its spend was counted when it was recorded, never again.
 */
export async function recoverEscrowOperations(
  wallet: Wallet,
  to: { agent: string; caller: EscrowCaller },
  options: { signal?: AbortSignal } = {},
): Promise<Replay[]> {
  const replays: Replay[] = [];
  for (const intent of await wallet.pending()) {
    if (intent.agent !== to.agent) continue;
    const o = options.signal ? { signal: options.signal } : undefined;
    let outcome: Replay['outcome'] = 'done';
    try {
      const method = methodOf(intent.method);
      if (intent.escrowId !== null)
        await statusOrFinish(wallet, intent, () => to.caller.status(intent.escrowId ?? '', o));
      await sendRecorded([wallet, intent], () => to.caller.call(method, intent.params, o), 'recovered');
    } catch (error) {
      outcome = definiteOutcome(error) === undefined ? 'pending' : 'failed';
    }
    replays.push({ opRef: intent.opRef, method: intent.method, escrowId: intent.escrowId, outcome });
  }
  return replays;
}

/** Reads the escrow's status; an escrow the agent certainly refuses to show ends the operation. */
async function statusOrFinish(wallet: Wallet, intent: Intent, status: () => Promise<unknown>): Promise<void> {
  try {
    await status();
  } catch (error) {
    const outcome = definiteOutcome(error);
    if (outcome !== undefined) await wallet.finish(intent, { ok: false, outcome }, 'recovered');
    throw error;
  }
}

function methodOf(method: string): EscrowMethod {
  if (!isEscrowMethod(method))
    throw new LocalError('INVALID_STATE', `a recorded wallet operation names an unknown method`);
  return method;
}

function str(value: JsonValue | undefined): string | null {
  return typeof value === 'string' ? value : null;
}

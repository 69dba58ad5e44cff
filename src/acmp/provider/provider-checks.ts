import { LocalError } from '../../shared/errors.js';
import { sha256Jcs } from '../../shared/jcs.js';
import { checkCapabilityInput, inputMismatchDetail } from '../wire/capability-input.js';
import { IMPLEMENTED_PROOF_METHODS } from '../wire/constants.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { parseInvokeParams } from '../wire/messages.js';
import { type InvokeParams, type Payload } from '../wire/task-messages.js';
import type { AcmpCapability } from './provider-types.js';

/**
 * Per-request feature checks, run for every invoke including duplicates (they depend on the connection).
 * Layer 1 §1: a provider serves only what it advertised; A2A binding §3.3: input streaming is declined;
 * §7.1: `stream: true` without output streaming is rejected.
 * @throws AcmpError -33007.
 */
export function checkFeatures(params: InvokeParams, outputStreaming: boolean, canStream: boolean): void {
  if (params.input_stream === true) {
    throw new AcmpError(ACMP_CODE.featureUnsupported, {
      task_id: params.task_id,
      feature: 'input_streaming',
    });
  }
  if (params.stream === true && (!outputStreaming || !canStream)) {
    throw new AcmpError(ACMP_CODE.featureUnsupported, {
      task_id: params.task_id,
      feature: 'output_streaming',
    });
  }
}

/** A capability accepted for a task, with its price and the input it runs on. */
export interface AcceptedTask {
  readonly capability: AcmpCapability;
  readonly price: number;
  readonly input: Payload;
}

/**
 * Task checks before a first execution.
 * @throws AcmpError -33002 unknown capability (Layer 1 §3.3), -33006 proof method not offered (Layer 3 §2),
 *   -32602 input that fails the capability's input schema (with `data.issues`), -33001 price above `max_price_cu` with `data.min_price_cu` (Layer 1 §3.1), -33099 for a broken price.
 */
export function checkTask(
  params: InvokeParams,
  capabilities: ReadonlyMap<string, AcmpCapability>,
  agreedPrice?: number,
): AcceptedTask {
  const taskId = params.task_id;
  const capability = capabilities.get(params.capability);
  if (!capability)
    throw new AcmpError(ACMP_CODE.capabilityNotFound, { task_id: taskId, capability: params.capability });
  const proof = params.proof_method;
  if (proof !== undefined && !offeredProofs(capability).includes(proof)) {
    throw new AcmpError(ACMP_CODE.proofUnsupported, { task_id: taskId, proof_method: proof });
  }
  // input is present: input_stream was declined by checkFeatures and the schema requires it otherwise.
  const input = params.input;
  if (input === undefined) throw new LocalError('INVALID_STATE', 'invoke params without input');
  const issues = checkCapabilityInput(capability, input.data);
  if (issues.length > 0) {
    throw new AcmpError(ACMP_CODE.invalidParams, {
      task_id: taskId,
      capability: capability.id,
      detail: inputMismatchDetail(capability),
      issues: issues.map((i) => ({ path: `/input/data${i.pointer}`, message: i.message })),
    });
  }
  // L6 §4: under an agreement the agreed price is the price (cost_cu = price_cu).
  const price =
    agreedPrice ?? (typeof capability.price === 'function' ? capability.price(input) : capability.price);
  if (!Number.isFinite(price) || price < 0) throw new AcmpError(ACMP_CODE.internal, { task_id: taskId });
  if (params.max_price_cu !== undefined && price > params.max_price_cu) {
    throw new AcmpError(ACMP_CODE.budgetExceeded, {
      task_id: taskId,
      min_price_cu: price,
      detail: `Minimum price for ${capability.id} is ${price} CU.`,
    });
  }
  return { capability, price, input };
}

/** Proof methods a capability offers that this implementation can produce. */
export function offeredProofs(capability: AcmpCapability): string[] {
  return (capability.proofMethods ?? ['result-hash']).filter((m) => IMPLEMENTED_PROOF_METHODS.includes(m));
}

/**
 * The identity of a task for duplicate detection: JCS hash of the params without the delivery fields
 * (`stream`, `timeout_ms`), which a retry may legitimately change (docs/acmp-core.md "Duplicates").
 * @throws AcmpError -32602 when the params hold a value JSON cannot carry (e.g. `1e309` read as Infinity).
 */
export function paramsHash(params: InvokeParams): string {
  const identity: Partial<InvokeParams> = { ...params };
  delete identity.stream;
  delete identity.timeout_ms;
  try {
    return sha256Jcs(identity);
  } catch {
    throw new AcmpError(ACMP_CODE.invalidParams, {
      task_id: params.task_id,
      issues: [{ path: '', message: 'params hold a number JSON cannot carry exactly (RFC 8785 §3.2.2.3)' }],
    });
  }
}

/** Invoke params parsed once at a binding's edge, with their identity hash: the core trusts both. */
export interface ParsedInvoke {
  readonly params: InvokeParams;
  readonly hash: string;
}

/**
 * Parses `acmp/invoke` params (Layer 1 §3.1) into a {@link ParsedInvoke}.
 * @throws AcmpError -32602 for params that fail the schema or cannot be canonicalised.
 */
export function parseInvoke(value: unknown): ParsedInvoke {
  return parsedInvoke(parseInvokeParams(value));
}

/**
 * The {@link ParsedInvoke} of params that already passed the schema (e.g. in a parsed data-Part root).
 * @throws AcmpError -32602 when they cannot be canonicalised.
 */
export function parsedInvoke(params: InvokeParams): ParsedInvoke {
  return { params, hash: paramsHash(params) };
}

/** -32602 for a task_id reused with different params; nothing is executed or replayed. */
export function reusedTaskIdError(taskId: string): AcmpError {
  return new AcmpError(ACMP_CODE.invalidParams, {
    task_id: taskId,
    detail: 'task_id already used with different params',
  });
}

/** -32602 for a task_id that belongs to another agent: never joined, replayed or revealed. */
export function taskIdInUseError(taskId: string): AcmpError {
  return new AcmpError(ACMP_CODE.invalidParams, { task_id: taskId, detail: 'task_id is already in use' });
}

/** Whether two scopes are the same caller. */
export function sameScope(
  a: { tenant: string; agent: string },
  b: { tenant: string; agent: string },
): boolean {
  return a.tenant === b.tenant && a.agent === b.agent;
}

/** `tokens_used` default: ceil(characters / 4) of input plus output data (strings as-is, else JSON). */
export function estimateTokens(...payloads: { data: unknown }[]): number {
  let chars = 0;
  for (const p of payloads)
    chars += typeof p.data === 'string' ? p.data.length : (JSON.stringify(p.data) ?? '').length;
  return Math.ceil(chars / 4);
}

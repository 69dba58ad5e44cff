import type { Clock } from '../../shared/clock.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import type { InvokeParams } from '../wire/task-messages.js';
import { estimateTokens } from '../provider/provider-checks.js';
import type { TaskScope } from '../provider/task-store.js';
import type { Agreement } from './agreement-store.js';

/**
 * Checks an invoke against the agreement it names (docs/acmp-negotiation.md "From agreement to invoke";
 * L6 §4: the agreed price is charged, the agreed proof method is required).
 * @throws AcmpError -32602 with `data.reason` `agreement_foreign|agreement_capability|agreement_expired`,
 *   as {@link consumedError} when another task holds it, -33006 `differs_from_agreement`, -33001 with
 *   `min_price_cu` (below the agreed price) or `input_exceeds_quote`.
 */
export function checkInvokeTerms(
  agreement: Agreement,
  params: InvokeParams,
  caller: { readonly scope: TaskScope; readonly clock: Clock },
): void {
  const { scope, clock } = caller;
  const refuse = (reason: string): AcmpError =>
    new AcmpError(ACMP_CODE.invalidParams, { task_id: params.task_id, reason });
  if (agreement.scope.tenant !== scope.tenant || agreement.scope.agent !== scope.agent)
    throw refuse('agreement_foreign');
  if (agreement.terms.capability !== params.capability) throw refuse('agreement_capability');
  if (agreement.consumedBy !== null && agreement.consumedBy !== params.task_id)
    throw consumedError(agreement, params.task_id);
  if (clock.now() > agreement.invokeBy) throw refuse('agreement_expired');
  const agreed = agreement.terms.proof_method;
  // L6 §4 / L3 §2: the invoke carries the negotiated proof method, no other.
  if (agreed !== undefined && params.proof_method !== agreed) {
    throw new AcmpError(ACMP_CODE.proofUnsupported, {
      task_id: params.task_id,
      proof_method: params.proof_method ?? null,
      reason: 'differs_from_agreement',
    });
  }
  const price = agreement.terms.price_cu;
  // L6 §4: the agreed price lands in max_price_cu, the ceiling.
  if (params.max_price_cu !== undefined && params.max_price_cu < price) {
    throw new AcmpError(ACMP_CODE.budgetExceeded, {
      task_id: params.task_id,
      min_price_cu: price,
      reason: 'below_agreed_price',
    });
  }
  const max = agreement.terms.input_tokens_max;
  if (max !== undefined && params.input !== undefined && estimateTokens(params.input) > max) {
    throw new AcmpError(ACMP_CODE.budgetExceeded, {
      task_id: params.task_id,
      reason: 'input_exceeds_quote',
    });
  }
}

/**
 * The refusal of a second invoke on one agreement (docs/acmp-negotiation.md "From agreement to invoke"):
 * -33005 `committed` when an escrow backs it (the escrow is spoken for), else -32602 `agreement_consumed`.
 */
export function consumedError(agreement: Agreement, taskId: string): AcmpError {
  return agreement.escrowId !== null
    ? new AcmpError(ACMP_CODE.escrowInvalid, {
        task_id: taskId,
        escrow_id: agreement.escrowId,
        reason: 'committed',
      })
    : new AcmpError(ACMP_CODE.invalidParams, { task_id: taskId, reason: 'agreement_consumed' });
}

import type { Clock } from '../../shared/clock.js';
import { errorFields, type Logger } from '../../shared/logger.js';
import type { Signer } from '../identity/signer.js';
import type { AcmpResult } from '../wire/task-messages.js';
import type { Admission, TaskEvent } from './provider-types.js';
import { withSignature } from '../identity/signed.js';

/** What signs a provider's results: its signer, the clock of `created_ms`, and where failures go. */
export interface ResultSigning {
  readonly signer: Signer;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * A result with its Layer 7 §4 envelope over exactly this object (proof included, Layer 7 §4.1 "Layer 1
 * result (incl. proof object)"). A signer that fails leaves the result unsigned (logged): the work is
 * done and stored, and a buyer that requires signatures refuses it rather than the provider losing it.
 */
export async function signResult(result: AcmpResult, signing: ResultSigning): Promise<AcmpResult> {
  try {
    return await withSignature(result, signing.signer, { clock: signing.clock });
  } catch (error) {
    signing.logger.error('acmp.result_sign_failed', { task_id: result.task_id, ...errorFields(error) });
    return result;
  }
}

/**
 * The events of an admission with every delivered result signed as delivered (docs/acmp-identity.md
 * "What is signed and checked"): a whole result is stored signed and passes as it is; a streamed result
 * (`output_streamed: true`, no `output`, Layer 1 §3.2) is another object, so it gets its own envelope.
 */
export function signedAdmission(admission: Admission, signing: ResultSigning | undefined): Admission {
  if (!signing || admission.kind !== 'task') return admission;
  return { ...admission, events: signedEvents(admission.events, signing) };
}

async function* signedEvents(
  events: AsyncIterable<TaskEvent>,
  signing: ResultSigning,
): AsyncIterable<TaskEvent> {
  for await (const event of events) {
    if (event.kind !== 'result' || (event.result.output_streamed !== true && 'sig' in event.result)) {
      yield event;
      continue;
    }
    yield { ...event, result: await signResult(event.result, signing) };
  }
}

import { delta, eventOp, leadState, snapshot } from '../test/helpers/acp-builders.js';
import type { Envelope } from '../src/acpspec/envelope.js';
import { uuidv7 } from '../src/shared/ids.js';

/** Envelopes per transaction: one snapshot (a retail lead with personal data and consent), then deltas. */
export const ACP_CHAIN_LENGTH = 20;

/**
 * An endless supply of envelopes for one sender: transactions of {@link ACP_CHAIN_LENGTH} envelopes, each
 * a lead snapshot followed by deltas that append one event to the head (the commonest update). The state
 * stays bounded (≤ 20 events), so throughput does not drift with the run's length.
 */
export function acpChain(): { next(): Envelope } {
  let transactionId = '';
  let parent = '';
  let step = ACP_CHAIN_LENGTH;
  return {
    next(): Envelope {
      const envelopeId = `urn:uuid:${uuidv7()}`;
      if (step === ACP_CHAIN_LENGTH) {
        step = 1;
        transactionId = `tx-${uuidv7()}`;
        parent = envelopeId;
        return snapshot({ transaction_id: transactionId, envelope_id: envelopeId, state: leadState() });
      }
      step++;
      const next = delta({ envelope_id: parent, transaction_id: transactionId }, [eventOp(`ev-${uuidv7()}`)], { envelope_id: envelopeId });
      parent = envelopeId;
      return next;
    },
  };
}

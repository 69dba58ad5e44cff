import { delta, eventOp, leadState, snapshot } from '../test/helpers/acp-builders.js';
import type { Envelope } from '../src/acpspec/envelope.js';
import { uuidv7 } from '../src/shared/ids.js';

/** Envelopes per transaction: one snapshot (a retail lead with personal data and consent), then deltas. */
export const ACP_CHAIN_LENGTH = 20;

/** Envelopes of the long-transaction scenario (issue 10: cost flat as a transaction grows). */
export const ACP_LONG_CHAIN_LENGTH = 1000;

/**
 * An endless supply of envelopes for one sender: transactions of `length` envelopes (default
 * {@link ACP_CHAIN_LENGTH}), each a lead snapshot followed by deltas that append one event to the head
 * (the commonest update). With the default the state stays bounded (≤ 20 events), so throughput does not
 * drift with the run's length; {@link ACP_LONG_CHAIN_LENGTH} grows one transaction to 1,000 events.
 */
export function acpChain(length = ACP_CHAIN_LENGTH): { next(): Envelope } {
  let transactionId = '';
  let parent = '';
  let step = length;
  return {
    next(): Envelope {
      const envelopeId = `urn:uuid:${uuidv7()}`;
      if (step === length) {
        step = 1;
        transactionId = `tx-${uuidv7()}`;
        parent = envelopeId;
        return snapshot({ transaction_id: transactionId, envelope_id: envelopeId, state: leadState() });
      }
      step++;
      const next = delta(
        { envelope_id: parent, transaction_id: transactionId },
        [eventOp(`ev-${uuidv7()}`)],
        { envelope_id: envelopeId },
      );
      parent = envelopeId;
      return next;
    },
  };
}

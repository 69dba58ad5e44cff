import type { Check } from '../check.js';
import { declaredOf, needAccepts } from './card.js';
import { expectCode, openWire, sameJson, setupAck, setupState, type AcpBinding } from './expect.js';
import { rule, steps } from './outcome.js';
import { baseState, deltaOn, freshTransactionId, kitEvent, snapshotOf } from './samples.js';
import type { AcpWire } from './wire.js';

/** Sends `envelope`, expects `code`, and checks the transaction's state did not move. */
async function refusedWhole(
  wire: AcpWire,
  sent: { envelope: unknown; code: string; name: string },
  before: Record<string, unknown>,
): Promise<void> {
  const transactionId = String(before['transaction_id']);
  expectCode(await wire.send(sent.envelope), sent.code, sent.name);
  const after = await setupState(wire, transactionId);
  rule(
    sameJson(before, after),
    `${sent.name}: refused, but the state changed after it (partial ingestion is non-conformant)`,
  );
}

/**
 * An invalid envelope is rejected whole (seed 001 "One Envelope, One DataPart": partial ingestion is
 * non-conformant; "The Conformance Rule": validate inbound, reject invalid envelopes whole). Each invalid
 * envelope mixes valid changes (a new stage, an appended event) with one fault: a snapshot with a
 * schema violation (`ACP_SCHEMA_INVALID`) and, when deltas are accepted, a delta whose last operation
 * fails (`ACP_PATCH_FAILED`). The state read before and after must be the same JSON.
 */
export function invalidCheck(binding: AcpBinding): Check {
  return {
    id: `${binding}-invalid-rejected-whole`,
    binding,
    title: 'an invalid envelope is refused with its code and leaves the state exactly as it was',
    spec: 'seed 001 "One Envelope, One DataPart" (rejected whole); design "Deltas"',
    writes: true,
    run: (ctx) =>
      steps(async () => {
        const declared = declaredOf(ctx);
        needAccepts(declared, 'snapshot');
        const wire = await openWire(ctx, binding);
        const first = snapshotOf(freshTransactionId('invalid'));
        setupAck(await wire.send(first), 'the first snapshot');
        const before = await setupState(wire, first.transaction_id);
        const invalidSnapshot = snapshotOf(
          first.transaction_id,
          baseState({
            transaction: { type: 'retail_purchase', stage: 'quote' },
            vehicles: { 'v-1': { role: 'of_interest', year: 1800 } },
            events: [kitEvent('ev-open', 'lead.created'), kitEvent('ev-invalid')],
          }),
        );
        await refusedWhole(
          wire,
          { envelope: invalidSnapshot, code: 'ACP_SCHEMA_INVALID', name: 'a schema-invalid snapshot' },
          before,
        );
        if (!declared.accepts.includes('delta')) return;
        const failingDelta = deltaOn(first, [
          { op: 'replace', path: '/transaction/stage', value: 'quote' },
          { op: 'add', path: '/events/-', value: kitEvent('ev-partial') },
          { op: 'test', path: '/transaction/type', value: 'lease' },
        ]);
        await refusedWhole(
          wire,
          { envelope: failingDelta, code: 'ACP_PATCH_FAILED', name: 'a delta whose last operation fails' },
          before,
        );
      }),
  };
}

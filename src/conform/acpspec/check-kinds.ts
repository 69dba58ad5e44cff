import type { Check } from '../check.js';
import { declaredOf } from './card.js';
import { expectAck, expectCode, openWire, type AcpBinding } from './expect.js';
import { rule, steps } from './outcome.js';
import { deltaOn, freshTransactionId, snapshotOf, unknownEnvelopeId } from './samples.js';
import { describe } from './wire.js';

/**
 * Declared kinds honoured (seed 001 "Declaring Support": an agent is held to its `accepts`): a kind the
 * card lists is received, a kind it does not list is refused with `ACP_KIND_NOT_ACCEPTED` (design "A2A
 * binding"). A delta the agent accepts but cannot place (no snapshot accepted to chain it on) must get
 * the next rule's answer, `ACP_PARENT_UNKNOWN`, not a kind refusal.
 */
export function kindsCheck(binding: AcpBinding): Check {
  return {
    id: `${binding}-kinds-honoured`,
    binding,
    title: 'what accepts lists is received; what it does not is refused with ACP_KIND_NOT_ACCEPTED',
    spec: 'seed 001 "Declaring Support in the Agent Card" (held to accepts); design "A2A binding"',
    writes: true,
    run: (ctx) =>
      steps(async () => {
        const declared = declaredOf(ctx);
        const wire = await openWire(ctx, binding);
        const snapshot = snapshotOf(freshTransactionId('kinds'));
        const first = await wire.send(snapshot);
        const snapshotAccepted = declared.accepts.includes('snapshot');
        if (snapshotAccepted) expectAck(first, 'a snapshot (accepts lists snapshot)');
        else expectCode(first, 'ACP_KIND_NOT_ACCEPTED', 'a snapshot (accepts lacks snapshot)');
        const parent = snapshotAccepted ? snapshot.envelope_id : unknownEnvelopeId();
        const delta = deltaOn({ transaction_id: snapshot.transaction_id, envelope_id: parent }, [
          { op: 'replace', path: '/transaction/stage', value: 'quote' },
        ]);
        const second = await wire.send(delta);
        if (!declared.accepts.includes('delta'))
          expectCode(second, 'ACP_KIND_NOT_ACCEPTED', 'a delta (accepts lacks delta)');
        else if (snapshotAccepted)
          expectAck(second, 'a delta on the acknowledged snapshot (accepts lists delta)');
        else
          rule(
            second.kind === 'error' && second.code === 'ACP_PARENT_UNKNOWN',
            `a delta with no parent held (accepts lists delta): expected ACP_PARENT_UNKNOWN, got ${describe(second)}`,
          );
      }),
  };
}

import { ACP_OBJECT_KEYS } from '../../acpspec/constants.js';
import { checkEnvelope } from '../../acpspec/validate.js';
import { isJsonObject } from '../../shared/json.js';
import type { Check } from '../check.js';
import { declaredOf, needAccepts } from './card.js';
import { expectCode, openWire, setupAck, type AcpBinding } from './expect.js';
import { broken, rule, steps } from './outcome.js';
import { deltaOn, freshTransactionId, snapshotOf, unknownEnvelopeId } from './samples.js';
import { describe } from './wire.js';

const SPEC = 'seed 001 "What Happens When Two Agents Meet Mid Transaction"';

/**
 * `ACP_PARENT_UNKNOWN` for a delta whose parent the receiver does not hold — both for a transaction it
 * has never seen and for one it holds (two agents meeting mid-deal), so the sender knows to send a
 * snapshot instead.
 */
export function parentUnknownCheck(binding: AcpBinding): Check {
  return {
    id: `${binding}-parent-unknown`,
    binding,
    title: 'a delta on a parent the receiver does not hold is refused with ACP_PARENT_UNKNOWN',
    spec: SPEC,
    writes: true,
    run: (ctx) =>
      steps(async () => {
        const declared = declaredOf(ctx);
        needAccepts(declared, 'delta');
        const wire = await openWire(ctx, binding);
        const patch = [{ op: 'replace' as const, path: '/transaction/stage', value: 'quote' }];
        const stranger = { transaction_id: freshTransactionId('parent'), envelope_id: unknownEnvelopeId() };
        expectCode(
          await wire.send(deltaOn(stranger, patch)),
          'ACP_PARENT_UNKNOWN',
          'a delta of an unknown transaction',
        );
        if (!declared.accepts.includes('snapshot')) return;
        const held = snapshotOf(freshTransactionId('parent'));
        setupAck(await wire.send(held), 'a snapshot');
        const midDeal = { transaction_id: held.transaction_id, envelope_id: unknownEnvelopeId() };
        expectCode(
          await wire.send(deltaOn(midDeal, patch)),
          'ACP_PARENT_UNKNOWN',
          'a delta of a held transaction on a parent never sent',
        );
      }),
  };
}

/**
 * The state request answers a snapshot, never a delta (seed 001: "It returns a snapshot or an error
 * object. It never returns a delta."): after a snapshot and, when accepted, a delta, the answer is a
 * schema-valid snapshot of that transaction reflecting the delta; an unknown transaction gets an error
 * (`ACP_TRANSACTION_UNKNOWN`), not an empty state.
 */
export function stateSnapshotCheck(binding: AcpBinding): Check {
  return {
    id: `${binding}-state-snapshot`,
    binding,
    title:
      'the state request answers a schema-valid snapshot of the current state (never a delta), or an error',
    spec: `${SPEC} (the state request)`,
    writes: true,
    run: (ctx) =>
      steps(async () => {
        const declared = declaredOf(ctx);
        needAccepts(declared, 'snapshot');
        const wire = await openWire(ctx, binding);
        const snapshot = snapshotOf(freshTransactionId('state'));
        setupAck(await wire.send(snapshot), 'a snapshot');
        const stage = declared.accepts.includes('delta') ? 'quote' : 'lead';
        if (stage === 'quote') {
          const delta = deltaOn(snapshot, [{ op: 'replace', path: '/transaction/stage', value: stage }]);
          setupAck(await wire.send(delta), 'a delta on the snapshot');
        }
        const reply = await wire.state(snapshot.transaction_id);
        if (reply.kind !== 'data') broken(`the state request answered ${describe(reply)}`);
        const answer = reply.data;
        rule(!('parent_envelope_id' in answer) && !('patch' in answer), 'the state request answered a delta');
        const missing = ACP_OBJECT_KEYS.filter((key) => !(key in answer));
        rule(missing.length === 0, `the state answer lacks ${missing.join(', ')}: not a complete snapshot`);
        const checked = checkEnvelope(answer);
        rule(
          checked.ok,
          `the state answer is not a valid snapshot: ${checked.ok ? '' : JSON.stringify(checked.issues.slice(0, 3))}`,
        );
        rule(
          answer['transaction_id'] === snapshot.transaction_id,
          'the state answer names another transaction',
        );
        const transaction = answer['transaction'];
        rule(
          isJsonObject(transaction) && transaction['stage'] === stage,
          `the state answer does not show the current state (stage ${stage})`,
        );
        expectCode(
          await wire.state(freshTransactionId('state')),
          'ACP_TRANSACTION_UNKNOWN',
          'an unknown transaction',
        );
      }),
  };
}

import { ACP_EVENT_TYPES } from '../../acpspec/constants.js';
import type { AcpState } from '../../acpspec/envelope.js';
import { isJsonObject } from '../../shared/json.js';
import type { Check } from '../check.js';
import { declaredOf, needAccepts } from './card.js';
import { eventIdOf, expectAck, openWire, setupAck, setupState, type AcpBinding } from './expect.js';
import { rule, steps } from './outcome.js';
import { baseState, deltaOn, evidencedConsent, freshTransactionId, snapshotOf } from './samples.js';
import type { AcpWire } from './wire.js';

/** The party and scope whose consent the check holds denied and then asserts granted. */
const PARTY = 'p-subject';
const SCOPE = 'marketing';

function heldState(state: Record<string, unknown>): unknown {
  const consent = state['consent'];
  const party = isJsonObject(consent) ? consent[PARTY] : undefined;
  const record = isJsonObject(party) ? party[SCOPE] : undefined;
  return isJsonObject(record) ? record['state'] : undefined;
}

/** After an upgrade attempt: the denial still held, and a new `consent.conflict` event in the stream. */
async function expectHeld(
  wire: AcpWire,
  before: Record<string, unknown>,
  attempt: string,
): Promise<Record<string, unknown>> {
  const after = await setupState(wire, String(before['transaction_id']));
  const held = heldState(after);
  rule(
    held === 'denied',
    `${attempt}: the held denial became ${JSON.stringify(held)} (consent was upgraded)`,
  );
  const earlier = new Set((before['events'] as unknown[]).map(eventIdOf));
  const appended = (after['events'] as unknown[]).filter((e) => !earlier.has(eventIdOf(e)));
  rule(
    appended.some((e) => isJsonObject(e) && e['type'] === ACP_EVENT_TYPES.consentConflict),
    `${attempt}: no ${ACP_EVENT_TYPES.consentConflict} event was appended (the conflict must be recorded)`,
  );
  return after;
}

/**
 * Consent cannot be upgraded, and the conflict appears as an event (seed 001 "Consent Survives the
 * Hop": the receiver's more restrictive state prevails; the conflict is recorded as an event rather than
 * discarded). The receiver is given a denial, then an envelope asserting an evidenced grant — as a
 * snapshot and, when accepted, as a delta: each is received, the denial stays, and a `consent.conflict`
 * event (docs/acpspec-core.md "Consent") is appended. Consent records carry no personal data, so this runs on any
 * endpoint.
 */
export function consentCheck(binding: AcpBinding): Check {
  return {
    id: `${binding}-consent-no-upgrade`,
    binding,
    title: 'an inbound envelope cannot raise held consent; the conflict is appended as an event',
    spec: 'seed 001 "Consent Survives the Hop"; design "Consent"',
    writes: true,
    run: (ctx) =>
      steps(async () => {
        const declared = declaredOf(ctx);
        needAccepts(declared, 'snapshot');
        const wire = await openWire(ctx, binding);
        const consentOf = (state: 'denied' | 'granted'): AcpState['consent'] => ({
          [PARTY]: { [SCOPE]: state === 'denied' ? { state } : evidencedConsent(state) },
        });
        const first = snapshotOf(freshTransactionId('consent'), baseState({ consent: consentOf('denied') }));
        setupAck(await wire.send(first), 'a snapshot holding a denial');
        let before = await setupState(wire, first.transaction_id);
        rule(heldState(before) === 'denied', 'the denial the receiver was given is not in its state');
        const raise = snapshotOf(first.transaction_id, baseState({ consent: consentOf('granted') }));
        expectAck(await wire.send(raise), 'a snapshot asserting a grant over the held denial');
        before = await expectHeld(wire, before, 'a snapshot asserting a grant');
        if (!declared.accepts.includes('delta')) return;
        const delta = deltaOn(raise, [
          { op: 'replace', path: `/consent/${PARTY}/${SCOPE}`, value: evidencedConsent('granted') },
        ]);
        expectAck(await wire.send(delta), 'a delta asserting a grant over the held denial');
        await expectHeld(wire, before, 'a delta asserting a grant');
      }),
  };
}

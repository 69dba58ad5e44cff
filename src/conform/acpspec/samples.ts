import {
  buildDelta,
  buildSnapshot,
  newEnvelopeId,
  type AcpEvent,
  type AcpState,
  type ConsentRecord,
  type DeltaEnvelope,
  type PatchOperation,
  type Producer,
  type SnapshotEnvelope,
} from '../../acpspec/envelope.js';

/**
 * The envelopes the ACPspec checks send (docs/conformance.md "ACPspec checks"). Every check writes under
 * a transaction id of its own (`conform-<label>-<random>`), so runs never touch each other's state or an
 * operator's real transactions. Samples carry no personal data — except {@link personalSnapshot}, which
 * only the cleartext check sends — so they are receivable on any endpoint.
 */

/** The producer on every envelope the kit sends. */
const KIT_PRODUCER: Producer = { agent_id: 'urn:a2a-commerce:conform', role: 'conformance_kit' };

const AT = '2025-06-01T12:00:00Z';

/** A transaction id no other run uses. */
export function freshTransactionId(label: string): string {
  return `conform-${label}-${crypto.randomUUID()}`;
}

/** An event of the kit's stream. */
export function kitEvent(id: string, type = 'conform.step'): AcpEvent {
  return {
    event_id: id,
    type,
    occurred_at: AT,
    actor: KIT_PRODUCER.agent_id,
    subject: '/transaction',
    data: {},
  };
}

/** A complete state without personal data: an organisation, a vehicle, no consent records. */
export function baseState(overrides: Partial<AcpState> = {}): AcpState {
  return {
    transaction: {
      type: 'retail_purchase',
      stage: 'lead',
      opened_at: AT,
      dealer: { dealer_id: 'dlr-conform' },
    },
    parties: {
      'p-dealer': { kind: 'organization', roles: ['dealer'], organization_name: 'Conformance Motors' },
    },
    consent: {},
    vehicles: {
      'v-1': { role: 'of_interest', vin: '1HGCM82633A004352', year: 2024, make: 'Honda', model: 'Accord' },
    },
    quote: { status: 'none' },
    financing: { method: 'undecided' },
    fulfillment: {},
    events: [kitEvent('ev-open', 'lead.created')],
    ...overrides,
  };
}

/** A snapshot of `transactionId` with a fresh envelope id. */
export function snapshotOf(transactionId: string, state: AcpState = baseState()): SnapshotEnvelope {
  return buildSnapshot({ transaction_id: transactionId, producer: KIT_PRODUCER, state });
}

/** A delta on `parentEnvelopeId` with a fresh envelope id. */
export function deltaOn(
  parent: { transaction_id: string; envelope_id: string },
  patch: PatchOperation[],
): DeltaEnvelope {
  return buildDelta({
    transaction_id: parent.transaction_id,
    parent_envelope_id: parent.envelope_id,
    producer: KIT_PRODUCER,
    patch,
  });
}

/** An envelope id no receiver holds. */
export function unknownEnvelopeId(): string {
  return newEnvelopeId();
}

/** A consent record with the evidence that establishes it (docs/acpspec-core.md "Consent"). */
export function evidencedConsent(state: ConsentRecord['state']): ConsentRecord {
  return {
    state,
    channels: ['email'],
    captured_at: AT,
    captured_by: KIT_PRODUCER.agent_id,
    method: 'web_form',
    consent_text: 'Conformance check: a consent record with its evidence.',
  };
}

/**
 * A snapshot carrying personal data (a person's name and email) with evidenced consent to share it:
 * receivable over TLS, never over cleartext (seed 001 "The Conformance Rule").
 */
export function personalSnapshot(transactionId: string): SnapshotEnvelope {
  return snapshotOf(
    transactionId,
    baseState({
      parties: {
        'p-buyer': {
          kind: 'person',
          roles: ['buyer'],
          name: { given: 'Ada', family: 'Example' },
          contact: { email: 'ada@example.com' },
        },
      },
      consent: { 'p-buyer': { data_sharing: evidencedConsent('granted') } },
    }),
  );
}

import type { Clock } from '../../src/shared/clock.js';
import type { IdSource } from '../../src/shared/ids.js';
import {
  buildDelta,
  buildSnapshot,
  type AcpParty,
  type AcpState,
  type ConsentRecord,
  type DeltaEnvelope,
  type PatchOperation,
  type Producer,
  type SnapshotEnvelope,
} from '../../src/acpspec/envelope.js';

/** The receiving agent used by tests and fixtures. */
export const RECEIVER_AGENT_ID = 'https://dealer.example/agents/acp';
/** The sending agent used by tests and fixtures. */
export const SENDER_AGENT_ID = 'https://assistant.example/agents/shopper';
/** Party ids used across tests. */
export const BUYER = 'p-buyer';
const DEALER = 'p-dealer';

/** A clock that stands still until moved. */
export function fixedClock(
  start = Date.parse('2025-06-01T12:00:00.000Z'),
): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, advance: (ms) => void (now += ms) };
}

/** Deterministic UUIDv7s: a fixed time prefix and a counter. */
export function sequentialIds(seed = 0x1000): IdSource {
  let n = seed;
  return {
    newId(prefix?: string): string {
      const tail = (n++).toString(16).padStart(12, '0');
      const uuid = `01977000-0000-7000-8000-${tail}`;
      return prefix === undefined ? uuid : `${prefix}_${uuid.replaceAll('-', '')}`;
    },
  };
}

/** A UUIDv7 envelope id from a small number (readable in fixtures). */
export function envelopeIdFor(n: number): string {
  return `urn:uuid:01977000-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;
}

export function producer(overrides: Partial<Producer> = {}): Producer {
  return { agent_id: SENDER_AGENT_ID, role: 'buyer_agent', ...overrides };
}

/** An evidenced consent record (establishes consent when nothing is held). */
export function grant(overrides: Partial<ConsentRecord> = {}): ConsentRecord {
  return {
    state: 'granted',
    channels: ['email'],
    captured_at: '2025-06-01T11:58:00Z',
    captured_by: SENDER_AGENT_ID,
    method: 'web_form',
    consent_text: 'I agree that my details are shared with the dealer I select to answer my inquiry.',
    ...overrides,
  };
}

export function buyer(overrides: Partial<AcpParty> = {}): AcpParty {
  return {
    kind: 'person',
    roles: ['buyer'],
    name: { given: 'Ada', family: 'Example' },
    contact: { email: 'ada@example.com', phone: '+15555550100', preferred_channel: 'email' },
    ...overrides,
  };
}

function dealer(overrides: Partial<AcpParty> = {}): AcpParty {
  return { kind: 'organization', roles: ['dealer'], organization_name: 'Example Motors', ...overrides };
}

/** A retail lead: a buyer with personal data and evidenced consent, a dealer, a vehicle of interest. */
export function leadState(overrides: Partial<AcpState> = {}): AcpState {
  return {
    transaction: {
      type: 'retail_purchase',
      stage: 'lead',
      opened_at: '2025-06-01T11:58:00Z',
      dealer: { dealer_id: 'dlr-100' },
    },
    parties: { [BUYER]: buyer(), [DEALER]: dealer() },
    consent: { [BUYER]: { data_sharing: grant(), contact: grant(), marketing: grant({ state: 'limited' }) } },
    vehicles: {
      'v-1': {
        role: 'of_interest',
        vin: '1HGCM82633A004352',
        year: 2024,
        make: 'Honda',
        model: 'Accord',
        condition: 'new',
      },
    },
    quote: { status: 'none' },
    financing: { method: 'undecided' },
    fulfillment: {},
    events: [
      {
        event_id: 'ev-lead-1',
        type: 'lead.created',
        occurred_at: '2025-06-01T11:58:00Z',
        actor: SENDER_AGENT_ID,
        subject: '/transaction',
        data: { channel: 'web' },
      },
    ],
    ...overrides,
  };
}

/** A state without any personal data (organisations only). */
export function anonymousState(overrides: Partial<AcpState> = {}): AcpState {
  return leadState({ parties: { [DEALER]: dealer() }, consent: {}, ...overrides });
}

/** A snapshot envelope around a state. */
export function snapshot(overrides: Partial<SnapshotEnvelope> & { state?: AcpState } = {}): SnapshotEnvelope {
  const { state, ...header } = overrides;
  const built = buildSnapshot({
    transaction_id: 'tx-1',
    producer: producer(),
    state: state ?? leadState(),
    envelope_id: envelopeIdFor(1),
    produced_at: '2025-06-01T12:00:00Z',
  });
  return { ...built, ...header };
}

/** A delta on `parent`. */
export function delta(
  parent: { envelope_id: string; transaction_id: string },
  patch: PatchOperation[],
  overrides: Partial<DeltaEnvelope> = {},
): DeltaEnvelope {
  return {
    ...buildDelta({
      transaction_id: parent.transaction_id,
      producer: producer(),
      parent_envelope_id: parent.envelope_id,
      patch,
      envelope_id: envelopeIdFor(2),
      produced_at: '2025-06-01T12:05:00Z',
    }),
    ...overrides,
  };
}

/** An event to append with `add /events/-`. */
export function eventOp(id: string, type = 'note.added'): PatchOperation {
  return {
    op: 'add',
    path: '/events/-',
    value: {
      event_id: id,
      type,
      occurred_at: '2025-06-01T12:04:00Z',
      actor: SENDER_AGENT_ID,
      subject: '/transaction',
      data: {},
    },
  };
}

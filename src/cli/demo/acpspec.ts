import { createHash } from 'node:crypto';
import { createAcpClient } from '../../a2a/acp/client.js';
import { applyDelta } from '../../acpspec/delta.js';
import {
  buildDelta,
  newEnvelopeId,
  type AcpEvent,
  type AcpState,
  type ConsentRecord,
  type PatchOperation,
} from '../../acpspec/envelope.js';
import { ACP_EVENT_TYPES } from '../../acpspec/constants.js';
import { createAcpHttpClient } from '../../http/acp-client.js';
import { DEFAULT_ACP_PRODUCER } from '../host-modules.js';
import { canonicalJson } from '../../shared/jcs.js';
import { expectThat } from './expect.js';
import type { DemoScenario } from './scenarios.js';

const ASSISTANT = { agent_id: 'agent:shopping-assistant', role: 'buyer_agent' } as const;
const BUYER = 'p-ada';
const AT = '2025-06-01T12:00:00Z';

function evidenced(state: ConsentRecord['state']): ConsentRecord {
  return {
    state,
    channels: ['email'],
    granted_to: [DEFAULT_ACP_PRODUCER.agent_id],
    captured_at: AT,
    captured_by: ASSISTANT.agent_id,
    method: 'agent_dialogue',
    consent_text: 'Share my details with the dealership I choose so it can quote and book an appraisal.',
  };
}

function event(id: string, type: string, subject: string): AcpEvent {
  return { event_id: id, type, occurred_at: AT, actor: ASSISTANT.agent_id, subject, data: {} };
}

/** What the shopping assistant holds when it meets the dealership: a lead built with another system. */
function leadInProgress(): AcpState {
  return {
    transaction: {
      type: 'retail_purchase',
      stage: 'lead',
      opened_at: AT,
      dealer: { dealer_id: 'dlr-riverside' },
    },
    parties: {
      [BUYER]: {
        kind: 'person',
        roles: ['buyer'],
        name: { given: 'Ada', family: 'Example' },
        contact: { email: 'ada@example.com', preferred_channel: 'email' },
      },
      'p-riverside': { kind: 'organization', roles: ['dealer'], organization_name: 'Riverside Motors' },
    },
    consent: {
      [BUYER]: {
        data_sharing: evidenced('granted'),
        contact: evidenced('granted'),
        marketing: evidenced('limited'),
      },
    },
    vehicles: {
      'v-interest': {
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
    events: [event('ev-lead', 'lead.created', '/transaction')],
  };
}

const QUOTE: PatchOperation[] = [
  { op: 'replace', path: '/transaction/stage', value: 'quote' },
  {
    op: 'replace',
    path: '/quote',
    value: {
      status: 'presented',
      quote_id: 'q-1',
      currency: 'USD',
      lines: {
        price: { kind: 'vehicle_price', vehicle_id: 'v-interest', amount_minor: 3129500 },
        doc: { kind: 'fee', amount_minor: 49900 },
      },
      totals: { subtotal_minor: 3129500, fees_minor: 49900, out_the_door_minor: 3179400 },
    },
  },
  { op: 'add', path: '/events/-', value: event('ev-quote', 'quote.presented', '/quote') },
];

const TRADE_IN: PatchOperation[] = [
  {
    op: 'add',
    path: '/vehicles/v-trade',
    value: {
      role: 'trade_in',
      year: 2017,
      make: 'Mazda',
      model: 'CX-5',
      condition: 'used',
      odometer: { value: 84000, unit: 'mi' },
      owner_party_id: BUYER,
    },
  },
  {
    op: 'add',
    path: '/quote/lines/trade',
    value: { kind: 'trade_allowance', vehicle_id: 'v-trade', amount_minor: -1450000 },
  },
  { op: 'replace', path: '/quote/totals/out_the_door_minor', value: 1729400 },
  { op: 'add', path: '/events/-', value: event('ev-trade', 'trade_in.added', '/vehicles/v-trade') },
];

const APPOINTMENT: PatchOperation[] = [
  {
    op: 'add',
    path: '/fulfillment/appointments',
    value: {
      'a-appraisal': {
        kind: 'appraisal',
        status: 'confirmed',
        starts_at: '2025-06-03T15:00:00Z',
        vehicle_id: 'v-trade',
        party_ids: [BUYER],
      },
    },
  },
  {
    op: 'add',
    path: '/events/-',
    value: event('ev-appt', 'appointment.confirmed', '/fulfillment/appointments/a-appraisal'),
  },
];

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

/**
 * ACPspec over A2A and HTTPS (seed 001): a shopping assistant meets a dealership agent mid-deal. Its delta
 * names a parent the dealership never saw → ACP_PARENT_UNKNOWN → one snapshot instead; then deltas (quote,
 * trade-in, appointment); a consent revocation; an attempted upgrade kept out and recorded; and the state
 * read over both bindings with identical bytes.
 */
export const acpspecScenario: DemoScenario = {
  title: 'ACPspec: shopping assistant meets a dealership mid-deal (A2A + HTTPS, consent, byte identity)',
  async run(ctx) {
    const held = leadInProgress();
    let recovered = false;
    const client = await createAcpClient({
      agentUrl: ctx.url,
      caCert: ctx.caCert,
      snapshotFor: (delta) => {
        recovered = true;
        ctx.say(
          '   dealership: ACP_PARENT_UNKNOWN → the assistant sends a snapshot instead (no retry of the delta)',
        );
        return Promise.resolve(applyDelta(held, delta));
      },
    });
    ctx.say(
      `   card: acp_version ${client.peer.acp_version}, accepts [${client.peer.accepts.join(', ')}], schema ${client.peer.schema_url}`,
    );
    const transactionId = `tx-demo-${crypto.randomUUID().slice(0, 8)}`;
    const meeting = buildDelta({
      transaction_id: transactionId,
      producer: { ...ASSISTANT },
      parent_envelope_id: newEnvelopeId(),
      patch: QUOTE,
    });
    ctx.say(
      `   assistant → dealership over A2A: delta (quote) on parent ${meeting.parent_envelope_id}, which the dealership never saw`,
    );
    const first = await client.send(meeting);
    expectThat(recovered && first.envelope_id !== meeting.envelope_id, 'ACP_PARENT_UNKNOWN and one snapshot');
    ctx.say(`   snapshot acknowledged: state ${first.state_envelope_id} (quote presented)`);

    for (const [label, patch] of [
      ['trade-in', TRADE_IN],
      ['appraisal appointment', APPOINTMENT],
    ] as const) {
      const ack = await client.sendDelta(transactionId, [...patch], { ...ASSISTANT });
      ctx.say(`   delta (${label}) acknowledged: ${ack.envelope_id}`);
    }

    await client.sendDelta(
      transactionId,
      [{ op: 'replace', path: `/consent/${BUYER}/marketing`, value: { state: 'revoked', captured_at: AT } }],
      { ...ASSISTANT },
    );
    const https = createAcpHttpClient({ baseUrl: ctx.url, ...(ctx.caCert ? { caCert: ctx.caCert } : {}) });
    expectThat(
      (await https.state(transactionId)).envelope.consent[BUYER]?.marketing?.state === 'revoked',
      'the revocation to be accepted',
    );
    ctx.say('   consent: marketing revoked → accepted');

    await client.sendDelta(
      transactionId,
      [{ op: 'replace', path: `/consent/${BUYER}/marketing`, value: evidenced('granted') }],
      { ...ASSISTANT },
    );
    const { events } = await https.events(transactionId, { limit: 1000 });
    const conflict = events.find((e) => e.type === ACP_EVENT_TYPES.consentConflict);
    expectThat(
      events.some((e) => e.type === ACP_EVENT_TYPES.consentLowered),
      'a consent.lowered event',
    );
    expectThat(conflict?.data['held'] === 'revoked', 'a consent.conflict event keeping "revoked"');
    ctx.say(
      `   consent: upgrade to granted kept out; events over HTTPS: consent.lowered, ${conflict.type} ${canonicalJson({ held: conflict.data['held'], asserted: conflict.data['asserted'] })}`,
    );

    const overA2A = Buffer.from(canonicalJson(await client.requestState(transactionId)), 'utf8');
    const overHttps = (await https.state(transactionId)).bytes;
    ctx.say(`   state over A2A:   sha256 ${sha256(overA2A)} (${overA2A.length} bytes)`);
    ctx.say(`   state over HTTPS: sha256 ${sha256(overHttps)} (${overHttps.length} bytes)`);
    expectThat(overA2A.equals(overHttps), 'identical state bytes on both bindings');
  },
};

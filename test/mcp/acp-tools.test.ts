import { afterEach, describe, expect, it } from 'vitest';
import { ACP_MCP_URIS } from '../../src/acpspec/constants.js';
import type { SnapshotEnvelope } from '../../src/acpspec/envelope.js';
import {
  anonymousState,
  BUYER,
  buyer,
  envelopeIdFor,
  eventOp,
  grant,
  snapshot,
} from '../helpers/acp-builders.js';
import { cleanup, shared } from '../helpers/cleanup.js';
import {
  acpErrorOf,
  acpMcpHost,
  callTool,
  mcpClient,
  otherBindingsState,
  readState,
  sendHttps,
} from './acp-helpers.js';
import { ERAS } from './helpers.js';

afterEach(cleanup);

// Each test works on transactions of its own, so the file shares one TLS host.
const host = shared(() => acpMcpHost());
let n = 0x9000;
/** A fresh transaction's lead snapshot (with the buyer's personal data and consent), sent over HTTPS. */
async function lead(prefix: string): Promise<SnapshotEnvelope> {
  n += 1;
  const s = snapshot({ transaction_id: `${prefix}-${n}`, envelope_id: envelopeIdFor(n) });
  await sendHttps(host(), s);
  return s;
}
async function stateId(transactionId: string): Promise<string> {
  return (await host().http.state(transactionId)).envelope.envelope_id;
}

describe('acp_apply_delta through THE receiver', () => {
  it.each(ERAS)('is read back over A2A and HTTPS byte-identically (%s)', async (era) => {
    const s = await lead('tx-rt');
    const { client } = await mcpClient(host(), era);
    const parent = await stateId(s.transaction_id);
    const answer = await callTool(client, 'acp_apply_delta', {
      transaction_id: s.transaction_id,
      parent_envelope_id: parent,
      patch: [{ op: 'replace', path: '/transaction/stage', value: 'quote' }, eventOp('ev-quote')],
    });
    expect(answer.isError).toBe(false);
    const ack = answer.structured.acp_ack as { state_envelope_id: string; envelope_id: string };
    expect(JSON.parse(answer.text)).toEqual(answer.structured);
    const others = await otherBindingsState(host(), s.transaction_id);
    expect(others.https).toBe(others.a2a);
    expect(await readState(client, s.transaction_id)).toBe(others.https);
    const state = JSON.parse(others.https) as SnapshotEnvelope;
    expect(state.envelope_id).toBe(ack.state_envelope_id);
    expect(state.transaction.stage).toBe('quote');
    expect(state.events.map((e) => e.event_id)).toContain('ev-quote');
    // The state the tool answers is the same bytes again.
    const read = await callTool(client, 'acp_request_state', { transaction_id: s.transaction_id });
    expect(read.text).toBe(others.https);
  });

  it('answers a result that is no valid snapshot with ACP_PATCH_FAILED and every issue; nothing changes', async () => {
    const s = await lead('tx-bad');
    const before = (await host().http.state(s.transaction_id)).bytes.toString('utf8');
    const { client } = await mcpClient(host(), 'modern');
    const answer = await callTool(client, 'acp_apply_delta', {
      transaction_id: s.transaction_id,
      parent_envelope_id: await stateId(s.transaction_id),
      patch: [eventOp('ev-never'), { op: 'replace', path: '/transaction/stage', value: 'haggling' }],
    });
    const error = acpErrorOf(answer);
    expect(error.code).toBe('ACP_PATCH_FAILED');
    expect(error.details?.issues).toEqual([expect.objectContaining({ pointer: '/transaction/stage' })]);
    expect(JSON.parse(answer.text)).toEqual({ acp_error: error });
    expect((await host().http.state(s.transaction_id)).bytes.toString('utf8')).toBe(before);
  });

  it('answers an operation outside the schema with ACP_SCHEMA_INVALID and its pointer', async () => {
    const s = await lead('tx-move');
    const { client } = await mcpClient(host(), 'legacy');
    const error = acpErrorOf(
      await callTool(client, 'acp_apply_delta', {
        transaction_id: s.transaction_id,
        parent_envelope_id: await stateId(s.transaction_id),
        patch: [{ op: 'move', from: '/quote', path: '/fulfillment' }],
      }),
    );
    expect(error.code).toBe('ACP_SCHEMA_INVALID');
    const pointers = (error.details?.issues as { pointer: string }[]).map((i) => i.pointer);
    expect(pointers.some((p) => p.startsWith('/patch/0'))).toBe(true);
  });

  it('answers a parent it does not hold with ACP_PARENT_UNKNOWN', async () => {
    const s = await lead('tx-orphan');
    const { client } = await mcpClient(host(), 'modern');
    const error = acpErrorOf(
      await callTool(client, 'acp_apply_delta', {
        transaction_id: s.transaction_id,
        parent_envelope_id: envelopeIdFor(0xdead),
        patch: [eventOp('ev-orphan')],
      }),
    );
    expect(error.code).toBe('ACP_PARENT_UNKNOWN');
  });
});

describe('consent at the boundary (seed 001 "Consent Survives the Hop")', () => {
  it('keeps the held state when an MCP delta raises consent, and records the conflict as an event', async () => {
    const s = await lead('tx-consent');
    const { client } = await mcpClient(host(), 'modern');
    const answer = await callTool(client, 'acp_apply_delta', {
      transaction_id: s.transaction_id,
      parent_envelope_id: await stateId(s.transaction_id),
      patch: [{ op: 'replace', path: `/consent/${BUYER}/marketing/state`, value: 'granted' }],
    });
    expect(answer.isError).toBe(false);
    const state = JSON.parse(await readState(client, s.transaction_id)) as SnapshotEnvelope;
    expect(state.consent[BUYER]?.marketing?.state).toBe('limited');
    const events = await callTool(client, 'acp_events', { transaction_id: s.transaction_id });
    const stream = (events.structured.events as { type: string; data: Record<string, unknown> }[]).map(
      (e) => e.type,
    );
    expect(stream).toContain('consent.conflict');
  });

  it('refuses personal data of a party without consent: ACP_CONSENT_REQUIRED, nothing stored', async () => {
    const s = await lead('tx-noconsent');
    const before = (await host().http.state(s.transaction_id)).bytes.toString('utf8');
    const { client } = await mcpClient(host(), 'legacy');
    const error = acpErrorOf(
      await callTool(client, 'acp_apply_delta', {
        transaction_id: s.transaction_id,
        parent_envelope_id: await stateId(s.transaction_id),
        patch: [{ op: 'add', path: '/parties/p-cobuyer', value: buyer({ roles: ['co_buyer'] }) }],
      }),
    );
    expect(error.code).toBe('ACP_CONSENT_REQUIRED');
    expect((await host().http.state(s.transaction_id)).bytes.toString('utf8')).toBe(before);
  });
});

describe('acp_submit_snapshot', () => {
  it('fills the header and answers the ack; a delta sent here is refused', async () => {
    const { client } = await mcpClient(host(), 'modern');
    const transactionId = `tx-submit-${++n}`;
    const answer = await callTool(client, 'acp_submit_snapshot', {
      envelope: { transaction_id: transactionId, ...anonymousState() },
    });
    expect(answer.structured).toMatchObject({ acp_ack: { transaction_id: transactionId } });
    const state = JSON.parse(await readState(client, transactionId)) as SnapshotEnvelope;
    expect(state.parties).toEqual(anonymousState().parties);
    const refused = acpErrorOf(
      await callTool(client, 'acp_submit_snapshot', {
        envelope: { transaction_id: transactionId, parent_envelope_id: state.envelope_id, patch: [] },
      }),
    );
    expect(refused.code).toBe('ACP_MESSAGE_NONCONFORMANT');
  });
});

describe('personal data and TLS (seed 001 "The Conformance Rule")', () => {
  it('refuses personal data over plain-HTTP MCP with ACP_TRANSPORT_INSECURE and takes what has none', async () => {
    // A host of its own: cleartext, declared to handle no personal data.
    const plain = await acpMcpHost({ 'no-tls': true, 'no-personal-data': true });
    const { client } = await mcpClient(plain, 'modern');
    const withPii = await callTool(client, 'acp_submit_snapshot', {
      envelope: { transaction_id: 'tx-pii', ...snapshotState() },
    });
    expect(acpErrorOf(withPii).code).toBe('ACP_TRANSPORT_INSECURE');
    await expect(client.readResource({ uri: ACP_MCP_URIS.transaction('tx-pii') })).rejects.toMatchObject({
      code: -32602,
    });
    const without = await callTool(client, 'acp_submit_snapshot', {
      envelope: { transaction_id: 'tx-nopii', ...anonymousState() },
    });
    expect(without.isError).toBe(false);
  });
});

describe('the context prompt', () => {
  it('frames the snapshot with the consent held and the rules', async () => {
    const s = await lead('tx-prompt');
    const { client } = await mcpClient(host(), 'modern');
    const prompt = await client.getPrompt({
      name: 'acp_transaction_context',
      arguments: { transaction_id: s.transaction_id },
    });
    const [resource, framing] = prompt.messages.map((m) => m.content) as [
      { type: string; resource: { text: string } },
      { type: string; text: string },
    ];
    expect(resource.resource.text).toBe((await host().http.state(s.transaction_id)).bytes.toString('utf8'));
    expect(framing.text).toMatch(new RegExp(`${BUYER}: [^;]*marketing=limited`));
    expect(framing.text).toContain('data_sharing=granted');
    expect(framing.text).toContain('ACP_CONSENT_REQUIRED');
  });
});

/** A lead state with the buyer's personal data and an evidenced grant. */
function snapshotState(): Record<string, unknown> {
  const { parties, consent, ...rest } = snapshot();
  return { ...stripHeader(rest), parties, consent: { ...consent, [BUYER]: { data_sharing: grant() } } };
}

function stripHeader(envelope: Record<string, unknown>): Record<string, unknown> {
  const {
    acp_version: _v,
    envelope_id: _e,
    transaction_id: _t,
    produced_at: _p,
    producer: _r,
    ...objects
  } = envelope;
  return objects;
}

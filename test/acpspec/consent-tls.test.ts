import { afterEach, describe, expect, it } from 'vitest';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { ACP_EVENT_TYPES } from '../../src/acpspec/constants.js';
import { createAcpSenderCore } from '../../src/acpspec/sender.js';
import { createAcpHttpClient } from '../../src/http/acp-client.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { anonymousState, BUYER, grant, leadState } from '../helpers/acp-builders.js';
import { readFixture } from '../helpers/acp-fixtures.js';
import { cleanup } from '../helpers/host.js';
import {
  codeOf,
  dataPart,
  errorCode,
  freshDelta,
  freshSnapshot,
  postEnvelope,
  sendRaw,
  startAcpHost,
  txId,
  userMessage,
} from './helpers.js';

afterEach(cleanup);

const CLEARTEXT = { 'no-tls': true, 'no-personal-data': true } as const;

describe('Consent Survives the Hop (seed; design "Consent")', () => {
  it('accepts a revocation and records it in the event stream', async () => {
    const host = await startAcpHost();
    const client = await createAcpClient({ agentUrl: host.url, caCert: host.caCert });
    const lead = freshSnapshot(txId('revoke'));
    await client.send(lead);
    await client.send(
      freshDelta(lead, [
        {
          op: 'replace',
          path: `/consent/${BUYER}/marketing`,
          value: { state: 'revoked', captured_at: '2025-06-01T12:03:00Z' },
        },
      ]),
    );
    const state = await client.requestState(lead.transaction_id);
    expect(state.consent[BUYER]?.marketing?.state).toBe('revoked');
    const { events } = await host.http.events(lead.transaction_id);
    expect(events.map((e) => [e.type, e.subject])).toContainEqual([
      ACP_EVENT_TYPES.consentLowered,
      `/consent/${BUYER}/marketing`,
    ]);
  });

  it('keeps an attempted upgrade out and records it as a consent.conflict event', async () => {
    const host = await startAcpHost();
    const client = await createAcpClient({ agentUrl: host.url, caCert: host.caCert });
    const lead = freshSnapshot(
      txId('upgrade'),
      leadState({ consent: { [BUYER]: { data_sharing: grant(), marketing: grant({ state: 'denied' }) } } }),
    );
    await client.send(lead);
    const attempt = freshDelta(lead, [
      {
        op: 'replace',
        path: `/consent/${BUYER}/marketing`,
        value: grant({ captured_at: '2025-06-01T12:09:00Z' }),
      },
    ]);
    const ack = await client.send(attempt);
    expect(ack.envelope_id).toBe(attempt.envelope_id);
    expect((await host.http.state(lead.transaction_id)).envelope.consent[BUYER]?.marketing?.state).toBe(
      'denied',
    );
    const { events } = await host.http.events(lead.transaction_id);
    const conflict = events.find((e) => e.type === ACP_EVENT_TYPES.consentConflict);
    expect(conflict).toMatchObject({
      subject: `/consent/${BUYER}/marketing`,
      data: { held: 'denied', asserted: 'granted', envelope_id: attempt.envelope_id },
    });
  });

  it('answers ACP_CONSENT_REQUIRED before anything reaches storage', async () => {
    const host = await startAcpHost();
    const envelope = freshSnapshot(txId('no-consent'), leadState({ consent: {} }));
    expect(errorCode(await sendRaw(host, userMessage([dataPart(envelope)])))).toBe('ACP_CONSENT_REQUIRED');
    const overHttps = await postEnvelope(host, canonicalJson(envelope));
    expect(overHttps.status).toBe(403);
    expect((overHttps.body['acp_error'] as { code: string }).code).toBe('ACP_CONSENT_REQUIRED');
    expect(await codeOf(host.http.state(envelope.transaction_id))).toBe('ACP_TRANSACTION_UNKNOWN');
    expect(await codeOf(host.http.events(envelope.transaction_id))).toBe('ACP_TRANSACTION_UNKNOWN');
  });
});

describe('personal data handed to another party (issue 9; design "Consent")', () => {
  it('refuses a delta re-pointing a registration or a delivery address to a party that denied consent, on both bindings', async () => {
    const host = await startAcpHost();
    const tradeIn = readFixture('valid/trade-in-snapshot.json').envelope;
    const parent = {
      envelope_id: String(tradeIn['envelope_id']),
      transaction_id: String(tradeIn['transaction_id']),
    };
    expect((await postEnvelope(host, canonicalJson(tradeIn))).status).toBe(200);
    const before = (await host.http.state(parent.transaction_id)).bytes;
    for (const path of ['/vehicles/v-trade/owner_party_id', '/fulfillment/delivery/recipient_party_id']) {
      const repoint = freshDelta(parent, [{ op: 'replace', path, value: 'p-denied' }]);
      expect(errorCode(await sendRaw(host, userMessage([dataPart(repoint)])))).toBe('ACP_CONSENT_REQUIRED');
      const overHttps = await postEnvelope(host, canonicalJson(repoint));
      expect(overHttps.status).toBe(403);
      expect((overHttps.body['acp_error'] as { code: string }).code).toBe('ACP_CONSENT_REQUIRED');
    }
    expect((await host.http.state(parent.transaction_id)).bytes.equals(before)).toBe(true);
  });
});

describe('personal data travels only over TLS (seed "The Conformance Rule"; design "Personal data and TLS")', () => {
  it('a cleartext host declared --no-personal-data rejects personal data with ACP_TRANSPORT_INSECURE on both bindings', async () => {
    const host = await startAcpHost({ flags: CLEARTEXT });
    expect(host.url).toMatch(/^http:/);
    const envelope = freshSnapshot(txId('cleartext'));
    expect(errorCode(await sendRaw(host, userMessage([dataPart(envelope)])))).toBe('ACP_TRANSPORT_INSECURE');
    const overHttps = await postEnvelope(host, canonicalJson(envelope));
    expect(overHttps.status).toBe(403);
    expect((overHttps.body['acp_error'] as { code: string }).code).toBe('ACP_TRANSPORT_INSECURE');
    expect(await codeOf(host.http.state(envelope.transaction_id))).toBe('ACP_TRANSACTION_UNKNOWN');
  });

  it('a cleartext host still accepts an envelope without personal data', async () => {
    const host = await startAcpHost({ flags: CLEARTEXT });
    const client = await createAcpClient({ agentUrl: host.url });
    const envelope = freshSnapshot(txId('anonymous'), anonymousState());
    expect((await client.send(envelope)).envelope_id).toBe(envelope.envelope_id);
  });

  it('the A2A client refuses to send personal data to an http: URL (nothing reaches the receiver)', async () => {
    const host = await startAcpHost({ flags: CLEARTEXT });
    const client = await createAcpClient({ agentUrl: host.url });
    expect(await codeOf(client.send(freshSnapshot(txId('refuse'))))).toBe('ACP_TRANSPORT_INSECURE');
    expect(host.a2aCalls).toHaveLength(0);
  });

  it('the HTTPS client refuses to send personal data to an http: URL', async () => {
    const host = await startAcpHost({ flags: CLEARTEXT });
    const http = createAcpHttpClient({ baseUrl: host.url });
    expect(http.transport.secure).toBe(false);
    const core = createAcpSenderCore({
      transport: http.transport,
      peer: { acp_version: '0.1', accepts: ['snapshot', 'delta'], emits: ['snapshot'] },
      self: { emits: ['snapshot', 'delta'] },
    });
    const envelope = freshSnapshot(txId('refuse-http'));
    expect(await codeOf(core.send(envelope))).toBe('ACP_TRANSPORT_INSECURE');
    expect(await codeOf(http.state(envelope.transaction_id))).toBe('ACP_TRANSACTION_UNKNOWN');
  });

  it('a host on a cleartext interface without --no-personal-data refuses to start (CONFIG_INVALID)', async () => {
    expect(await codeOf(startAcpHost({ flags: { 'no-tls': true } }))).toBe('CONFIG_INVALID');
  });
});

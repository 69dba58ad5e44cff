import { afterEach, describe, expect, it } from 'vitest';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { ACP_EVENT_TYPES } from '../../src/acpspec/constants.js';
import type { HostFlags } from '../../src/server/config.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { BUYER, eventOp, producer } from '../helpers/acp-builders.js';
import { cleanup, tempDir } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { freshSnapshot, startAcpHost, txId, type AcpTestHost } from './helpers.js';

afterEach(cleanup);

interface Variant {
  name: string;
  /** Flags for a host on the same store each time it is called. */
  store(): Promise<{ flags: HostFlags; dataDir: string; migrate: boolean }>;
}

const variants: Variant[] = [
  {
    name: 'SQLite (the embedded default)',
    store: () =>
      Promise.resolve({
        flags: { 'tls-self-signed': true },
        dataDir: tempDir('a2ac-acp-sqlite-'),
        migrate: false,
      }),
  },
];
if (process.env.TEST_PG_URL) {
  variants.push({
    name: 'PostgreSQL',
    store: async () => ({
      flags: { 'tls-self-signed': true, db: await freshPgDatabase() },
      dataDir: tempDir('a2ac-acp-pg-'),
      migrate: true,
    }),
  });
}

/** A snapshot then a delta over A2A; returns the state bytes both bindings hand out. */
async function roundTrip(host: AcpTestHost): Promise<{ transactionId: string; a2a: string; https: Buffer }> {
  const client = await createAcpClient({ agentUrl: host.url, caCert: host.caCert });
  const lead = freshSnapshot(txId('store'));
  await client.send(lead);
  await client.sendDelta(
    lead.transaction_id,
    [{ op: 'replace', path: '/transaction/stage', value: 'quote' }, eventOp('ev-store-1')],
    producer(),
  );
  const a2a = canonicalJson(await client.requestState(lead.transaction_id));
  const { bytes } = await host.http.state(lead.transaction_id);
  return { transactionId: lead.transaction_id, a2a, https: bytes };
}

describe.each(variants)('binding round trip on $name', (variant) => {
  it('stores a snapshot and a delta and answers the same bytes on both bindings', async () => {
    const { flags, dataDir, migrate } = await variant.store();
    const host = await startAcpHost({ flags, dataDir, migrate });
    const { transactionId, a2a, https } = await roundTrip(host);
    expect(https.toString('utf8')).toBe(a2a);
    const { events } = await host.http.events(transactionId);
    expect(events.map((e) => e.type)).toEqual([
      'lead.created',
      ...['data_sharing', 'contact', 'marketing'].map(() => ACP_EVENT_TYPES.consentEstablished),
      'note.added',
    ]);
    expect(events.filter((e) => e.subject.startsWith(`/consent/${BUYER}/`))).toHaveLength(3);
  });

  it('serves the same state bytes and stream after a restart on the same store', async () => {
    const { flags, dataDir, migrate } = await variant.store();
    const first = await startAcpHost({ flags, dataDir, migrate });
    const { transactionId, https } = await roundTrip(first);
    const before = await first.http.events(transactionId);
    await first.close();
    const second = await startAcpHost({ flags, dataDir, migrate });
    expect((await second.http.state(transactionId)).bytes.equals(https)).toBe(true);
    expect(await second.http.events(transactionId)).toEqual(before);
  });
});

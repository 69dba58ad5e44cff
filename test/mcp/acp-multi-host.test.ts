import { afterEach, describe, expect, it } from 'vitest';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { ACP_MCP_URIS } from '../../src/acpspec/constants.js';
import { anonymousState, delta, envelopeIdFor, eventOp, snapshot } from '../helpers/acp-builders.js';
import { cleanup } from '../helpers/cleanup.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { acpMcpHost, asCaller, mcpClient, sendHttps, updated, type AcpMcpHost } from './acp-helpers.js';
import { ALICE, BOB, type RecordingClient } from './helpers.js';

afterEach(cleanup);

let n = 0x9000;
function fresh(prefix: string): ReturnType<typeof snapshot> {
  n += 1;
  return snapshot({
    transaction_id: `${prefix}-${n}`,
    envelope_id: envelopeIdFor(n),
    state: anonymousState(),
  });
}

/** Two ACPspec hosts on one fresh PostgreSQL database (the first migrates it). */
async function twoHosts(): Promise<[AcpMcpHost, AcpMcpHost]> {
  const db = await freshPgDatabase();
  const one = await acpMcpHost({ 'tls-self-signed': true, db }, 'acpspec', { migrate: true });
  const two = await acpMcpHost({ 'tls-self-signed': true, db }, 'acpspec');
  return [one, two];
}

function methods(rec: RecordingClient, method: string, uri?: string): number {
  return rec.notifications.filter((x) => x.method === method && (uri === undefined || x.params.uri === uri))
    .length;
}

/** docs/acpspec-mcp.md "Subscriptions": hosts sharing PostgreSQL hear each other's commits (LISTEN/NOTIFY). */
describe.skipIf(!process.env.TEST_PG_URL)('subscriptions across hosts sharing PostgreSQL', () => {
  it('notifies a listen stream on host 2 of a delta accepted over A2A on host 1, to its owner only', async () => {
    const [one, two] = await twoHosts();
    const s = fresh('tx-mh');
    await sendHttps(one, s);
    const uri = ACP_MCP_URIS.transaction(s.transaction_id);
    const alice = await mcpClient(two, 'modern');
    await alice.client.listen({ resourceSubscriptions: [uri] });
    const bob = await mcpClient(two, 'modern', BOB);
    await bob.client.listen({ resourceSubscriptions: [uri] });
    const a2a = await createAcpClient({ agentUrl: one.url, token: ALICE, caCert: one.caCert });
    await a2a.send(delta(s, [eventOp('ev-a2a')], { envelope_id: envelopeIdFor(++n) }));
    await updated(alice, uri, 1);
    // Bob's own commit on host 1 reaches his stream after alice's would have (one stream is in order).
    const bobs = fresh('tx-mh-bob');
    const bobsUri = ACP_MCP_URIS.transaction(bobs.transaction_id);
    const bob2 = await mcpClient(two, 'modern', BOB);
    await bob2.client.listen({ resourceSubscriptions: [uri, bobsUri] });
    await sendHttps(asCaller(one, BOB), bobs);
    await updated(bob2, bobsUri, 1);
    expect(methods(bob, 'notifications/resources/updated')).toBe(0);
    expect(methods(bob2, 'notifications/resources/updated', uri)).toBe(0);
  });

  it('tells the owner’s stream on host 2 that its list changed when host 1 created a transaction', async () => {
    const [one, two] = await twoHosts();
    const alice = await mcpClient(two, 'modern');
    await alice.client.listen({ resourcesListChanged: true });
    const s = fresh('tx-mh-list');
    await sendHttps(one, s);
    while (methods(alice, 'notifications/resources/list_changed') < 1)
      await new Promise((resolve) => setTimeout(resolve, 5));
    const { resources } = await alice.client.listResources();
    expect(resources.map((r) => r.uri)).toContain(ACP_MCP_URIS.transaction(s.transaction_id));
  });
});

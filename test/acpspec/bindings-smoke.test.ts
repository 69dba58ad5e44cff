import { afterEach, describe, expect, it } from 'vitest';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { RECEIVER_AGENT_ID, snapshot } from '../helpers/acp-builders.js';
import { A2A_TRANSPORTS, clientTransport, transportFlags } from '../helpers/transports.js';

afterEach(cleanup);

describe.each(A2A_TRANSPORTS)('ACPspec over A2A (%s) and HTTPS (smoke)', (transport) => {
  it('ingests a snapshot over A2A and answers the same state bytes on both bindings', async () => {
    const host = await startTestHost({
      flags: { 'tls-self-signed': true, ...transportFlags(transport) },
      modules: [acpModule({ producer: { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' } })],
    });
    // The snapshot carries personal data: the client sends it only because it reaches the host over TLS.
    const client = await createAcpClient({
      agentUrl: host.url,
      caCert: host.tls!.cert,
      transport: clientTransport(transport),
    });
    const envelope = snapshot();
    const ack = await client.send(envelope);
    expect(ack.transaction_id).toBe(envelope.transaction_id);
    const overA2A = await client.requestState(envelope.transaction_id);
    const { Agent, fetch: undiciFetch } = await import('undici');
    const res = await undiciFetch(
      `${host.url}/acp/v0.1/transactions/${encodeURIComponent(envelope.transaction_id)}/state`,
      {
        dispatcher: new Agent({ connect: { ca: host.tls!.cert } }),
      },
    );
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer()).toString('utf8');
    expect(canonicalJson(overA2A)).toBe(bytes);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { SnapshotEnvelope } from '../../src/acpspec/envelope.js';
import { createAcpHttpClient } from '../../src/http/acp-client.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { buyer, envelopeIdFor, eventOp, snapshot } from '../helpers/acp-builders.js';
import { RECEIVER } from '../acpspec/helpers.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';
import { acpErrorOf, callTool } from './acp-helpers.js';
import { ALICE, ERAS, stdioClient, TOKEN_FLAGS, type RecordingClient } from './helpers.js';

afterEach(cleanup);

const ENV = { A2AC_TOKENS: TOKEN_FLAGS.token.join(','), A2AC_TOKEN: ALICE };
let n = 0xa000;

async function listChanged(rec: RecordingClient): Promise<void> {
  while (!rec.notifications.some((x) => x.method === 'notifications/resources/list_changed'))
    await new Promise((resolve) => setTimeout(resolve, 5));
}

/** docs/acpspec-mcp.md "Tools", "Personal data and TLS": stdio is a local pipe and counts as secure. */
describe.each(ERAS)('ACPspec tools over mcp-stdio in a real child process (%s)', (era) => {
  it('submits, applies a delta, reads the state as HTTPS does; refuses without consent with the ACP code', async () => {
    const dataDir = tempDir('a2ac-acp-stdio-');
    const rec = await stdioClient(era, ['--data-dir', dataDir], ENV);
    if (era === 'modern') await rec.client.listen({ resourcesListChanged: true });
    n += 1;
    const lead: SnapshotEnvelope = snapshot({
      transaction_id: `tx-stdio-${n}`,
      envelope_id: envelopeIdFor(n),
    });
    const submitted = await callTool(rec.client, 'acp_submit_snapshot', { envelope: lead });
    expect(submitted.structured).toMatchObject({ acp_ack: { transaction_id: lead.transaction_id } });
    // The snapshot created a transaction of this caller: its list changed (docs "Subscriptions").
    await listChanged(rec);
    const stateOf = async (): Promise<{ text: string; id: string }> => {
      const answer = await callTool(rec.client, 'acp_request_state', { transaction_id: lead.transaction_id });
      return { text: answer.text, id: String(answer.structured.envelope_id) };
    };
    const applied = await callTool(rec.client, 'acp_apply_delta', {
      transaction_id: lead.transaction_id,
      parent_envelope_id: (await stateOf()).id,
      patch: [eventOp('ev-stdio')],
    });
    expect(applied.isError).toBe(false);
    const refused = acpErrorOf(
      await callTool(rec.client, 'acp_apply_delta', {
        transaction_id: lead.transaction_id,
        parent_envelope_id: (await stateOf()).id,
        patch: [{ op: 'add', path: '/parties/p-cobuyer', value: buyer({ roles: ['co_buyer'] }) }],
      }),
    );
    expect(refused.code).toBe('ACP_CONSENT_REQUIRED');
    const overStdio = (await stateOf()).text;
    expect(overStdio).toContain('ev-stdio');
    await rec.client.close();
    // A host on the same data directory answers the very bytes over HTTPS.
    const host = await startTestHost({
      flags: { 'tls-self-signed': true, ...TOKEN_FLAGS },
      dataDir,
      modules: [acpModule({ producer: { ...RECEIVER } })],
    });
    const https = createAcpHttpClient({ baseUrl: host.url, token: ALICE, caCert: host.tls?.cert });
    expect((await https.state(lead.transaction_id)).bytes.toString('utf8')).toBe(overStdio);
  });
});

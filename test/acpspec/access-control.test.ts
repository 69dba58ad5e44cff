import { afterEach, describe, expect, it } from 'vitest';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { createAcpHttpClient } from '../../src/http/acp-client.js';
import { cleanup } from '../helpers/host.js';
import { codeOf, freshDelta, freshSnapshot, startAcpHost, txId } from './helpers.js';
import { eventOp } from '../helpers/acp-builders.js';

afterEach(cleanup);

const ALICE = 'assistant-alice-token-0123456789';
const BOB = 'assistant-bobby-token-0123456789';

describe('a transaction belongs to the agent that created it (personal data stays with its sender)', () => {
  async function setup() {
    const host = await startAcpHost({ flags: { 'tls-self-signed': true, token: [ALICE, BOB] } });
    const alice = await createAcpClient({ agentUrl: host.url, caCert: host.caCert, token: ALICE });
    const bob = await createAcpClient({ agentUrl: host.url, caCert: host.caCert, token: BOB });
    const bobHttp = createAcpHttpClient({ baseUrl: host.url, caCert: host.caCert, token: BOB });
    const transactionId = txId('owned');
    const first = freshSnapshot(transactionId);
    await alice.send(first);
    return { host, alice, bob, bobHttp, transactionId, first };
  }

  it("answers another agent's state request as if the transaction did not exist, on both bindings", async () => {
    const { alice, bob, bobHttp, transactionId } = await setup();
    expect((await alice.requestState(transactionId)).transaction_id).toBe(transactionId);
    expect(await codeOf(bob.requestState(transactionId))).toBe('ACP_TRANSACTION_UNKNOWN');
    expect(await codeOf(bobHttp.state(transactionId))).toBe('ACP_TRANSACTION_UNKNOWN');
    expect(await codeOf(bobHttp.events(transactionId, { after: 0 }))).toBe('ACP_TRANSACTION_UNKNOWN');
  });

  it('refuses envelopes from another agent into the transaction, and its owner carries on', async () => {
    const { alice, bob, transactionId, first } = await setup();
    expect(await codeOf(bob.send(freshSnapshot(transactionId)))).toBe('ACP_POLICY_VIOLATION');
    expect(await codeOf(bob.send(first))).toBe('ACP_POLICY_VIOLATION');
    const state = await alice.requestState(transactionId);
    const next = freshDelta(state, [eventOp('ev-alice-1')]);
    expect((await alice.send(next)).envelope_id).toBe(next.envelope_id);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { taskStateName } from '../../src/a2a/part-codec.js';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { ESCROW_METHOD as M, ESCROW_METHODS, ESCROW_PROFILE_URI } from '../../src/acmp/escrow/constants.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, postJson } from '../helpers/host.js';
import { collectUntil, escrowHost, secret } from './helpers.js';
import { waitFor } from '../helpers/wait-for.js';

afterEach(cleanup);

// The card, a refusal and E17 (one escrow of the buyer's, which no other test on this host reads) share
// one agent. Tests that assert balances or the buyer's list of escrows, or configure the agent otherwise,
// start their own.
const plainAgent = shared(() => escrowHost());

const later = (ms: number) => Date.now() + ms;
const LIST_ALL = {
  tenant: '',
  contextId: '',
  status: 0,
  pageSize: 10,
  pageToken: '',
  historyLength: 0,
  statusTimestampAfter: undefined,
  includeArtifacts: false,
};

describe('escrow agent over A2A: card (L4 §1, A2A binding §2)', () => {
  it('advertises role escrow-agent with the seven methods and our profile settings', async () => {
    const { host } = plainAgent();
    const card = await fetchAgentCard(host.url);
    const acmp = card.capabilities?.extensions.find((e) => e.uri === ACMP_EXTENSION_URI);
    expect(acmp?.params).toMatchObject({ role: 'escrow-agent', accepts: [...ESCROW_METHODS] });
    const profile = card.capabilities?.extensions.find((e) => e.uri === ESCROW_PROFILE_URI);
    expect(profile?.params).toMatchObject({
      amount_unit: '1e-9 CU',
      challenge_window_ms: { min: 200 },
      dispute: { resolution_deadline_ms: 60_000, default_outcome: 'refund_buyer' },
    });
  });
});

describe('escrow operations as ACMP data parts over JSON-RPC and REST (L4 §4)', () => {
  for (const transport of ['JSONRPC', 'HTTP+JSON'] as const) {
    it(`locks, binds, releases and reads status over ${transport}, identity from the bearer token`, async () => {
      const agent = await escrowHost();
      await agent.credit('agent:buyer', '1');
      const buyer = await agent.client('buyer', transport);
      const locked = await buyer.call(M.lock, {
        op_ref: 'l1',
        amount_cu: 0.01,
        valid_until_ms: later(3_600_000),
      });
      const escrowId = locked.escrow_id as string;
      await buyer.call(M.bind, { op_ref: 'b1', escrow_id: escrowId, payee_id: 'agent:provider' });
      expect(
        await buyer.call(M.release, {
          op_ref: 'r1',
          escrow_id: escrowId,
          amount_cu: 0.004,
          payee_id: 'agent:provider',
        }),
      ).toMatchObject({ released_cu: 0.004, remaining_cu: 0.006 });
      const provider = await agent.client('provider', transport);
      expect(await provider.status(escrowId)).toMatchObject({
        state: 'open',
        released_cu: 0.004,
        payee_id: 'agent:provider',
      });
      expect(await agent.ledger.balance('', 'agent:provider')).toBe(4_000_000n);
    });
  }

  it('routes escrow messages to the escrow agent whatever the module order (the ACMP module listed first)', async () => {
    const agent = await escrowHost({ extra: [acmpModule({ capabilities: [] })], extraFirst: true });
    await agent.credit('agent:buyer', '1');
    const buyer = await agent.client('buyer');
    const locked = await buyer.call(M.lock, {
      op_ref: 'order-1',
      amount_cu: 0.01,
      valid_until_ms: later(60_000),
    });
    expect(locked.escrow_id).toEqual(expect.any(String));
  });

  it('E17: an unauthenticated call gets HTTP 401 and no data; a stranger gets -35005 and sees no task', async () => {
    const agent = plainAgent();
    await agent.credit('agent:buyer', '1');
    const escrowId = (
      await (
        await agent.client('buyer')
      ).call(M.lock, { op_ref: 'l', amount_cu: 0.01, valid_until_ms: later(60_000) })
    ).escrow_id as string;
    const anonymous = await postJson(
      `${agent.host.url}/a2a/jsonrpc`,
      { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} },
      { 'A2A-Version': '1.0' },
    );
    expect(anonymous.status).toBe(401);
    expect(JSON.stringify(anonymous.body)).not.toContain(escrowId);
    const mallory = await agent.client('mallory');
    await expect(mallory.status(escrowId)).rejects.toMatchObject({ code: -35005 });
    const sdk = await createA2AClient(await fetchAgentCard(agent.host.url), { token: secret('mallory') });
    await expect(sdk.getTask({ tenant: '', id: escrowId })).rejects.toThrow(/not found/i);
    expect((await sdk.listTasks(LIST_ALL)).tasks).toHaveLength(0);
  });

  it('refuses escrow messages from a client that did not activate the ACMP extension (-32008)', async () => {
    const agent = plainAgent();
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: {
        message: {
          messageId: 'm1',
          role: 'ROLE_USER',
          parts: [
            {
              mediaType: 'application/acmp+json',
              data: { acmp_method: M.status, params: { escrow_id: 'esc_x' } },
            },
          ],
        },
      },
    };
    const res = await postJson(`${agent.host.url}/a2a/jsonrpc`, body, {
      'A2A-Version': '1.0',
      Authorization: `Bearer ${secret('buyer')}`,
    });
    expect((res.body as { error?: { code: number } }).error?.code).toBe(-32008);
  });
});

describe('each escrow is an A2A task its two parties can read and follow (design §4.6)', () => {
  it('GetTask and ListTasks show the escrow to the buyer and the bound payee; CancelTask is refused (-32002)', async () => {
    const agent = await escrowHost();
    await agent.credit('agent:buyer', '1');
    const buyer = await agent.client('buyer');
    const escrowId = (
      await buyer.call(M.lock, {
        op_ref: 'l',
        amount_cu: 0.01,
        valid_until_ms: later(60_000),
        payee_id: 'agent:provider',
      })
    ).escrow_id as string;
    for (const name of ['buyer', 'provider'] as const) {
      const sdk = await createA2AClient(await fetchAgentCard(agent.host.url), { token: secret(name) });
      const task = await sdk.getTask({ tenant: '', id: escrowId });
      expect(taskStateName(task.status?.state)).toBe('working');
      const list = await sdk.listTasks(LIST_ALL);
      expect(list.tasks.map((t) => t.id)).toEqual([escrowId]);
      await expect(sdk.cancelTask({ tenant: '', id: escrowId, metadata: undefined })).rejects.toThrow(
        /cannot be canceled|not cancelable/i,
      );
    }
  });

  it('E9: the buyer hears of a claim for a task that never ran at once, disputes, and is refunded at the deadline', async () => {
    const agent = await escrowHost({
      module: {
        settings: { minChallengeWindowMs: 200, defaultChallengeWindowMs: 60_000, disputeDeadlineMs: 600 },
      },
    });
    await agent.credit('agent:buyer', '1');
    const buyer = await agent.client('buyer');
    const provider = await agent.client('provider');
    const escrowId = (
      await buyer.call(M.lock, { op_ref: 'l', amount_cu: 0.005, valid_until_ms: later(3_600_000) })
    ).escrow_id as string;
    await buyer.call(M.bind, {
      op_ref: 'b',
      escrow_id: escrowId,
      payee_id: 'agent:provider',
      agreed_price_cu: 0.005,
    });
    const seen: string[] = [];
    const watching = collectUntil(buyer.watch(escrowId), (status) => {
      seen.push(String(status.state));
      return status.state === 'closed';
    });
    await waitFor(() => seen.length > 0);
    const filed = Date.now();
    await provider.call(M.claim, {
      op_ref: 'c',
      escrow_id: escrowId,
      amount_cu: 0.005,
      task_id: 'never_ran',
      proof: { method: 'result-hash', hash: 'sha256:00' },
    });
    await waitFor(() => seen.includes('claimed'));
    expect(Date.now() - filed).toBeLessThan(1_000);
    await buyer.call(M.dispute, { op_ref: 'd', escrow_id: escrowId, reason: 'no such task was run' });
    const statuses = await watching;
    expect(seen).toEqual(['open', 'claimed', 'disputed', 'closed']);
    expect(statuses.at(-1)).toMatchObject({
      state: 'closed',
      dispute: { resolution: { by: 'default', to_buyer_cu: 0.005 } },
    });
    expect(await agent.ledger.balance('', 'agent:buyer')).toBe(1_000_000_000n);
    const totals = await agent.ledger.totals();
    expect(totals.balances + totals.remaining + totals.pending).toBe(totals.credits);
  });
});

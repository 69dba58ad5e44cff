import { afterEach, describe, expect, it } from 'vitest';
import { createA2AAcmpBuyer, type A2AAcmpBuyer } from '../../src/connect/a2a-acmp-buyer.js';
import type { BuyerEscrow } from '../../src/a2a/escrow/buyer-escrow.js';
import type { EscrowClient } from '../../src/a2a/escrow/client.js';
import { signingEscrowClient } from '../../src/a2a/escrow/signing-client.js';
import { codeOf } from '../acmp/helpers.js';
import { createDidResolver } from '../../src/acmp/identity/resolver.js';
import { verifyObject } from '../../src/acmp/identity/verify.js';
import { signObject } from '../../src/acmp/identity/envelope.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { collectUntil, escrowHost, secret } from '../escrow/helpers.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { didKeyIdentity } from '../helpers/identity.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { waitFor } from '../helpers/wait-for.js';

afterEach(cleanup);

const INPUT = { type: 'text', data: 'Revenue grew 12% YoY.' };

/**
 * An escrow agent, a provider whose payee id there is its did:key (it signs with that key), and a buyer
 * with a did:key of its own: both parties of every escrow are DIDs (Layer 7 §4.1, docs/acmp-escrow.md).
 */
async function didParties(options: { db?: string; claimDelayMs?: number } = {}) {
  const escrow = await escrowHost({
    ...(options.db ? { db: options.db, migrate: true } : {}),
    module: { settings: { minChallengeWindowMs: 200, defaultChallengeWindowMs: 60_000 } },
  });
  await escrow.credit('agent:buyer', '1');
  const payee = didKeyIdentity();
  const buyerId = didKeyIdentity();
  const provider = await startTestHost({
    modules: [
      acmpModule({
        capabilities: demoCapabilities({ stepMs: 2 }),
        signer: payee.signer,
        escrowAgent: {
          agentUrl: escrow.host.url,
          token: secret('provider'),
          payeeId: payee.did,
          // Long by default: the tests that claim by hand come first; the settler's own claim is opt-in.
          claimDelayMs: options.claimDelayMs ?? 60_000,
          settleEveryMs: 50,
        },
      }),
    ],
  });
  const buyer = (await createA2AAcmpBuyer({
    agentUrl: provider.url,
    escrow: { agentUrl: escrow.host.url, token: secret('buyer'), signer: buyerId.signer },
  })) as A2AAcmpBuyer & { escrow: BuyerEscrow };
  /** A locked escrow bound to the payee DID, and a task it paid for (the buyer stays silent). */
  const funded = async (): Promise<{ escrowId: string; taskId: string }> => {
    const escrowId = await buyer.escrow.lock(0.01, Date.now() + 600_000, { challengeWindowMs: 60_000 });
    await buyer.escrow.bind(escrowId, buyer.escrowAgents[0]!.payeeId);
    const result = await buyer.invoke({
      capability: 'sentiment-analysis',
      input: INPUT,
      max_price_cu: 0.005,
      proof_method: 'result-hash',
      escrow_id: escrowId,
    });
    return { escrowId, taskId: result.task_id };
  };
  const claimOf = (escrowId: string, taskId: string) => ({
    op_ref: `claim-manual-${taskId}`,
    escrow_id: escrowId,
    amount_cu: 0.001,
    task_id: taskId,
    proof: { method: 'result-hash', hash: `sha256:${'0'.repeat(64)}` },
  });
  return { escrow, payee, buyerId, buyer, funded, claimOf };
}

const resolver = createDidResolver();

describe('escrow claims and disputes of DID parties are signed (Layer 7 §4.1, L4 §4.5/§4.6)', () => {
  it('an unsigned claim against an escrow bound to a DID payee is -36003 and nothing moves', async () => {
    const { escrow, funded, claimOf, buyer } = await didParties();
    const { escrowId, taskId } = await funded();
    const provider: EscrowClient = await escrow.client('provider');
    expect(await codeOf(provider.call('acmp/escrowClaim', claimOf(escrowId, taskId)))).toMatchObject({
      code: -36003,
      data: { reason: 'unsigned' },
    });
    // Signed, but by another did:key than the bound payee (the substitution attack, L7 §3).
    const mallory = signingEscrowClient(await escrow.client('mallory'), didKeyIdentity().signer);
    expect(await codeOf(mallory.call('acmp/escrowClaim', claimOf(escrowId, taskId)))).toMatchObject({
      code: -36003,
      data: { check: 'did' },
    });
    const status = await buyer.escrow.status(escrowId);
    expect(status).toMatchObject({ state: 'open', released_cu: 0, claim: null });
  });

  it('our provider signs its claim; the agent accepts it and keeps the envelope in escrowStatus and the escrow task', async () => {
    const { funded, buyer, payee } = await didParties({ claimDelayMs: 200 });
    const { escrowId, taskId } = await funded();
    await waitFor(async () => (await buyer.escrow.status(escrowId)).state === 'claimed');
    const status = await buyer.escrow.status(escrowId);
    expect(status.claim).toMatchObject({ task_id: taskId, sig: { did: payee.did, alg: 'EdDSA' } });
    const [viewed] = await collectUntil(buyer.escrow.watch(escrowId), () => true);
    expect(viewed?.claim).toMatchObject({ sig: { did: payee.did } });
  });

  it('a retried signed claim (a fresh envelope, the same op_ref) replays the first outcome', async () => {
    const { escrow, funded, claimOf, payee } = await didParties();
    const { escrowId, taskId } = await funded();
    const provider = signingEscrowClient(await escrow.client('provider'), payee.signer);
    const first = await provider.call('acmp/escrowClaim', claimOf(escrowId, taskId));
    expect(first).toMatchObject({ state: 'claimed' });
    expect(await provider.call('acmp/escrowClaim', claimOf(escrowId, taskId))).toEqual(first);
    // Only the envelope is left out of the op_ref comparison: other params are still a conflict.
    expect(
      await codeOf(provider.call('acmp/escrowClaim', { ...claimOf(escrowId, taskId), amount_cu: 0.002 })),
    ).toMatchObject({ code: -35003, data: { reason: 'op_ref_conflict' } });
  });

  it('the DID payee reads its escrow with a signed status; a stale or foreign signed read is -36003', async () => {
    const { escrow, funded, payee } = await didParties();
    const { escrowId } = await funded();
    const fresh = signingEscrowClient(await escrow.client('provider'), payee.signer);
    expect(await fresh.status(escrowId)).toMatchObject({ escrow_id: escrowId, payee_id: payee.did });
    const tenMinutesAgo = { now: () => Date.now() - 600_000 };
    const stale = signingEscrowClient(await escrow.client('provider'), payee.signer, tenMinutesAgo);
    expect(await codeOf(stale.status(escrowId))).toMatchObject({
      code: -36003,
      data: { check: 'created_ms' },
    });
    const foreign = signingEscrowClient(await escrow.client('mallory'), didKeyIdentity().signer);
    expect(await codeOf(foreign.status(escrowId))).toMatchObject({ code: -36003, data: { check: 'did' } });
    expect(await codeOf((await escrow.client('mallory')).status(escrowId))).toMatchObject({ code: -35005 });
  });

  it('a DID buyer: an unsigned dispute is -36003 and the claim stands; a signed one disputes and is kept', async () => {
    const { escrow, funded, buyer, buyerId } = await didParties({ claimDelayMs: 200 });
    const { escrowId } = await funded();
    expect(await buyer.escrow.status(escrowId)).toMatchObject({ buyer_did: buyerId.did });
    await waitFor(async () => (await buyer.escrow.status(escrowId)).state === 'claimed');
    const unsigned = await escrow.client('buyer');
    expect(
      await codeOf(
        unsigned.call('acmp/escrowDispute', {
          op_ref: 'dispute-unsigned',
          escrow_id: escrowId,
          reason: 'no',
        }),
      ),
    ).toMatchObject({ code: -36003 });
    expect((await buyer.escrow.status(escrowId)).state).toBe('claimed');
    await buyer.escrow.dispute(escrowId, 'the output does not match the input', { task: 'evidence' });
    const status = await buyer.escrow.status(escrowId);
    expect(status).toMatchObject({ state: 'disputed', dispute: { sig: { did: buyerId.did } } });
  });

  it('the signed claim the agent keeps verifies again, as an arbiter would check it', async () => {
    const { escrow, funded, claimOf, payee } = await didParties();
    const { escrowId, taskId } = await funded();
    const provider = signingEscrowClient(await escrow.client('provider'), payee.signer);
    await provider.call('acmp/escrowClaim', claimOf(escrowId, taskId));
    const record = await escrow.ledger.get(escrowId);
    const signed = record?.claim?.signed;
    expect(signed).toMatchObject({ escrow_id: escrowId, task_id: taskId });
    expect((await verifyObject(signed, { resolver, expectedDid: payee.did })).did).toBe(payee.did);
  });
});

describe.skipIf(!process.env.TEST_PG_URL)('DID-bound escrows on PostgreSQL', () => {
  it('the buyer DID and the signed claim survive the row (migration 0003)', async () => {
    const { escrow, funded, claimOf, payee, buyer, buyerId } = await didParties({
      db: await freshPgDatabase(),
    });
    const { escrowId, taskId } = await funded();
    const provider = signingEscrowClient(await escrow.client('provider'), payee.signer);
    await provider.call('acmp/escrowClaim', claimOf(escrowId, taskId));
    expect(await buyer.escrow.status(escrowId)).toMatchObject({
      buyer_did: buyerId.did,
      claim: { sig: { did: payee.did } },
    });
  });
});

describe('a DID payee\'s signed claim is its proof before payout (docs/acmp-escrow.md "DID parties")', () => {
  it('a claim signed by the payee DID more than 5 minutes ago (held back, replayed) is -36003 created_ms; a fresh one is accepted', async () => {
    const { escrow, funded, claimOf, payee, buyer } = await didParties();
    const { escrowId, taskId } = await funded();
    const provider = await escrow.client('provider');
    const old = await signObject(claimOf(escrowId, taskId), payee.signer, {
      clock: { now: () => Date.now() - 6 * 60_000 },
    });
    expect(await codeOf(provider.call('acmp/escrowClaim', old))).toEqual({
      code: -36003,
      data: { check: 'created_ms' },
    });
    expect(await buyer.escrow.status(escrowId)).toMatchObject({ state: 'open', claim: null });
    const fresh = await signObject(claimOf(escrowId, taskId), payee.signer);
    await provider.call('acmp/escrowClaim', fresh);
    expect(await buyer.escrow.status(escrowId)).toMatchObject({
      state: 'claimed',
      claim: { sig: { did: payee.did } },
    });
  });
});

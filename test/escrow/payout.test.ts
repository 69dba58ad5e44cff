import { afterEach, describe, expect, it } from 'vitest';
import type { EscrowClient } from '../../src/a2a/escrow/client.js';
import { signingEscrowClient } from '../../src/a2a/escrow/signing-client.js';
import { createA2AAcmpBuyer, type A2AAcmpBuyer } from '../../src/connect/a2a-acmp-buyer.js';
import type { BuyerEscrow } from '../../src/a2a/escrow/buyer-escrow.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { didKeyIdentity } from '../helpers/identity.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { escrowHost, secret } from './helpers.js';

afterEach(cleanup);

const LEDGER = [{ rail: 'credit-ledger', account: 'acct_did_payee' }];

async function errorOf(work: Promise<unknown>): Promise<{ code: number }> {
  try {
    await work;
  } catch (error) {
    if (error instanceof AcmpError) return { code: error.code };
    throw error;
  }
  throw new Error('expected an ACMP error');
}

/** A client that changes the payout list after the signing client signed the params (a tampering relay). */
function tampering(client: EscrowClient): EscrowClient {
  return {
    ...client,
    call: (method, params, options) =>
      client.call(
        method,
        { ...params, payout: [{ rail: 'credit-ledger', account: 'acct_mallory' }] },
        options,
      ),
  };
}

/**
 * A DID payee's payout list travels with its signed claim (docs/acmp-escrow.md "Payout configuration"):
 * the Layer 7 §4 envelope covers it, so a relay that changes the list is refused and changes nothing.
 */
async function scenario(db?: string): Promise<void> {
  const escrow = await escrowHost(db ? { db, migrate: true } : {});
  await escrow.credit('agent:buyer', '1');
  const payee = didKeyIdentity();
  const buyer = await escrow.client('buyer');
  const lock = async (opRef: string): Promise<string> => {
    const params = {
      op_ref: opRef,
      amount_cu: 0.01,
      valid_until_ms: Date.now() + 600_000,
      payee_id: payee.did,
    };
    return (await buyer.call('acmp/escrowLock', params)).escrow_id as string;
  };
  const claimOf = (escrowId: string) => ({
    op_ref: `claim-${escrowId}`,
    escrow_id: escrowId,
    amount_cu: 0.003,
    task_id: 'task_1',
    proof: {},
    payout: LEDGER,
  });
  const provider = await escrow.client('provider');
  const tampered = await lock('lock-t');
  expect(
    await errorOf(
      signingEscrowClient(tampering(provider), payee.signer).call('acmp/escrowClaim', claimOf(tampered)),
    ),
  ).toMatchObject({ code: -36003 });
  const signed = signingEscrowClient(provider, payee.signer);
  const escrowId = await lock('lock-1');
  expect(await signed.call('acmp/escrowClaim', claimOf(escrowId))).toMatchObject({ state: 'claimed' });
  // The list is part of the signed claim the agent keeps as evidence.
  expect((await escrow.ledger.get(escrowId))?.claim?.signed).toMatchObject({ payout: LEDGER });
  await buyer.call('acmp/escrowRelease', {
    op_ref: 'rel-1',
    escrow_id: escrowId,
    amount_cu: 0.003,
    payee_id: payee.did,
  });
  expect(await escrow.ledger.balance('', 'acct_did_payee')).toBe(3_000_000n);
  expect(await escrow.ledger.balance('', 'acct_mallory')).toBe(0n);
  expect(await escrow.ledger.balance('', payee.did)).toBe(0n);
  expect(await signed.status(escrowId)).toMatchObject({
    payee_payout: { rail: 'credit-ledger', account: 'acct_did_payee', source: 'configured' },
  });
  expect((await buyer.status(escrowId)).payee_payout).toEqual({
    rail: 'credit-ledger',
    source: 'configured',
  });
  const totals = await escrow.ledger.totals();
  expect(totals.balances + totals.remaining + totals.pending).toBe(totals.credits);
}

describe('a DID payee registers its payout list with its signed claim (Layer 7 §4.1, §6.4)', () => {
  it('on SQLite: a tampered list is -36003 and registers nothing; the signed one routes the release', async () => {
    await scenario();
  });

  it.skipIf(!process.env.TEST_PG_URL)('on PostgreSQL: the same', async () => {
    await scenario(await freshPgDatabase());
  });
});

describe('our provider sends its payout list with its claims', () => {
  it('a silent buyer: the settler claims with the list, the window passes, the account it names is paid', async () => {
    const escrow = await escrowHost({
      module: { settings: { minChallengeWindowMs: 200, defaultChallengeWindowMs: 300 } },
    });
    await escrow.credit('agent:buyer', '1');
    const provider = await startTestHost({
      modules: [
        acmpModule({
          capabilities: demoCapabilities({ stepMs: 5 }),
          escrowAgent: {
            agentUrl: escrow.host.url,
            token: secret('provider'),
            payeeId: 'agent:provider',
            claimDelayMs: 300,
            settleEveryMs: 50,
            payout: [{ rail: 'credit-ledger', account: 'acct_provider_ops' }],
          },
        }),
      ],
    });
    const buyer = (await createA2AAcmpBuyer({
      agentUrl: provider.url,
      escrow: { agentUrl: escrow.host.url, token: secret('buyer') },
    })) as A2AAcmpBuyer & { escrow: BuyerEscrow };
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000);
    await buyer.escrow.bind(escrowId, 'agent:provider');
    const result = await buyer.invoke({
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'Revenue grew 12% YoY.' },
      max_price_cu: 0.005,
      proof_method: 'result-hash',
      escrow_id: escrowId,
    });
    const cost = BigInt(Math.round(result.cost_cu * 1e9));
    const start = Date.now();
    while ((await escrow.ledger.balance('', 'acct_provider_ops')) !== cost) {
      if (Date.now() - start > 8_000) throw new Error('the claim was not paid to the configured account');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(await escrow.ledger.balance('', 'agent:provider')).toBe(0n);
    const totals = await escrow.ledger.totals();
    expect(totals.balances + totals.remaining + totals.pending).toBe(totals.credits);
  });
});

import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createA2AAcmpBuyer, type A2AAcmpBuyer } from '../../src/connect/a2a-acmp-buyer.js';
import type { BuyerEscrow } from '../../src/a2a/escrow/buyer-escrow.js';
import { createEscrowClient } from '../../src/a2a/escrow/client.js';
import { createKeySigner, didKeyOf, type Signer } from '../../src/acmp/identity/index.js';
import type { Payload } from '../../src/acmp/wire/task-messages.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { escrowHost, secret } from './helpers.js';

afterEach(cleanup);

const INPUT: Payload = { type: 'text', data: 'Revenue grew 12% YoY.' };
const DID_CALLERS = { 'accept-did-callers': true };

function didKeySigner(): Signer {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return createKeySigner(didKeyOf(publicKey), privateKey);
}

/**
 * An escrow agent and a provider that accept DID callers; the provider reaches the escrow agent with a
 * token (payee `agent:provider`) or, given a signer, with its DID (payee: the DID).
 */
async function market(providerSigner?: Signer) {
  const escrow = await escrowHost({ flags: DID_CALLERS });
  const payeeId = providerSigner?.did ?? 'agent:provider';
  const provider = await startTestHost({
    flags: DID_CALLERS,
    modules: [
      acmpModule({
        capabilities: demoCapabilities({ stepMs: 5 }),
        negotiation: true,
        escrowAgent: {
          agentUrl: escrow.host.url,
          ...(providerSigner ? { signer: providerSigner } : { token: secret('provider') }),
          payeeId,
          claimDelayMs: 300,
          settleEveryMs: 50,
        },
      }),
    ],
  });
  return { escrow, provider, payeeId };
}

describe('a stranger buyer with only a DID (docs/acmp-identity.md "Callers identified by DID")', () => {
  it.each([
    ['a provider paid to agent:provider', false],
    ['a provider paid to its own DID', true],
  ])('locks, negotiates (offerRequest + accept), binds, invokes and releases with %s', async (_, byDid) => {
    const { escrow, provider, payeeId } = await market(byDid ? didKeySigner() : undefined);
    const stranger = didKeySigner();
    await escrow.credit(stranger.did, '1');
    const buyer = (await createA2AAcmpBuyer({
      agentUrl: provider.url,
      signer: stranger,
      escrow: { agentUrl: escrow.host.url, signer: stranger },
    })) as A2AAcmpBuyer & { escrow: BuyerEscrow };
    const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000);
    const agreement = await buyer.negotiate({
      capability: 'sentiment-analysis',
      max_price_cu: 0.005,
      proof_method: 'result-hash',
      escrow_id: escrowId,
      input: INPUT,
    });
    expect(agreement.session).toBeUndefined();
    await buyer.escrow.bind(escrowId, payeeId, { agreedPriceCu: agreement.ack.price_cu });
    const result = await buyer.invoke({ agreement });
    await buyer.escrow.releaseFor(
      escrowId,
      { payeeId, result },
      { output: result.output!, input: INPUT, proofMethod: 'result-hash' },
    );
    expect(await buyer.escrow.reclaim(escrowId)).toMatchObject({ state: 'closed' });
    const paid = BigInt(Math.round(result.cost_cu * 1e9));
    expect(await escrow.ledger.balance('', payeeId)).toBe(paid);
    expect(await escrow.ledger.balance('', stranger.did)).toBe(1_000_000_000n - paid);
  });

  it("another DID is not a party to the stranger's escrow (-35005 not_a_party)", async () => {
    const { escrow } = await market();
    const stranger = didKeySigner();
    await escrow.credit(stranger.did, '1');
    const mine = await createEscrowClient({ agentUrl: escrow.host.url, signer: stranger });
    const theirs = await createEscrowClient({ agentUrl: escrow.host.url, signer: didKeySigner() });
    const locked = await mine.call('acmp/escrowLock', {
      op_ref: 'lock-1',
      amount_cu: 0.002,
      valid_until_ms: Date.now() + 3_600_000,
    });
    const escrowId = locked.escrow_id as string;
    expect((await mine.status(escrowId)).state).toBeDefined();
    await expect(theirs.status(escrowId)).rejects.toMatchObject({
      code: -35005,
      data: { reason: 'not_a_party' },
    });
  });
});

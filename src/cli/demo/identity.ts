import { generateKeyPairSync } from 'node:crypto';
import { z } from 'zod';
import { createAcmpBuyer } from '../../a2a/acmp/buyer.js';
import { createA2AAcmpBuyer } from '../../connect/a2a-acmp-buyer.js';
import { fetchAgentCard } from '../../a2a/client.js';
import { isAcmpError } from '../../acmp/wire/errors.js';
import { KyselyEscrowStore } from '../../storage/escrow/escrow-store-kysely.js';
import { didKeyOf } from '../../acmp/identity/did-key.js';
import { createDidResolver } from '../../acmp/identity/resolver.js';
import { createKeySigner } from '../../acmp/identity/signer.js';
import { verifyObject } from '../../acmp/identity/verify.js';
import { demoCapabilities } from '../../demo/capabilities.js';
import type { RunningHost } from '../../server/host.js';
import { acmpModule } from '../../server/modules/acmp.js';
import { escrowModule } from '../../server/modules/escrow.js';
import { hasEscrow, invokeUnderEscrow, secretOf, start, type EscrowBuyer } from './escrow.js';
import { expectShape, expectThat } from './expect.js';
import type { DemoContext, DemoScenario } from './scenarios.js';
import { startTamperProxy } from './tamper-proxy.js';

const BUYER_TOKEN = 'buyer=demo-buyer-secret-0123456789';
const PROVIDER_TOKEN = 'provider=demo-provider-secret-0123456789';

/** `did:key:z6Mk…` shortened for the transcript. */
const short = (did: string) => `${did.slice(0, 16)}…${did.slice(-4)}`;

/**
 * Layer 7: a provider with a did:key signs its offers and its escrow claim; the buyer verifies each
 * against the card's DID, refuses an offer whose price changed in transit (N19), and challenges the
 * provider (`acmp/proveIdentity`) before its first payment.
 */
export const identityScenario: DemoScenario = {
  title:
    'ACMP identity (Layer 7): a signed offer, a tampered one refused, a challenge before paying, a signed escrow claim',
  async run(ctx) {
    const hosts: { close(): Promise<void> }[] = [];
    try {
      const { agent, provider, did, ledger } = await startAgents(ctx, hosts);
      const resolver = createDidResolver();
      const buyer = await createA2AAcmpBuyer({
        agentUrl: provider.url,
        caCert: ctx.caCert,
        signatures: { resolver },
        escrow: { agentUrl: agent.url, token: secretOf(BUYER_TOKEN), caCert: ctx.caCert },
      });
      expectThat(hasEscrow(buyer), 'the buyer to pay through the escrow agent');
      expectThat(buyer.capabilityObject.did === did, 'the card to advertise the provider DID');
      ctx.say(`   provider ${short(did)} (its card's capability object names this did:key)`);
      const offer = await buyer.quote({ capability: 'sentiment-analysis', proof_method: 'result-hash' });
      const checked = await verifyObject(offer, { resolver, expectedDid: did });
      ctx.say(
        `   acmp/offerRequest → offer ${offer.price_cu} CU, sig.did ${short(checked.did)} ${checked.alg}: verified`,
      );
      await tamperedQuote(ctx, provider.url);
      const proof = await buyer.proveIdentity({ resolver });
      ctx.say(
        `   acmp/proveIdentity with a fresh nonce → ${short(proof.did)} proved (remembered: the buyer's first payment below needs no second challenge)`,
      );
      await signedClaim(ctx, { buyer, ledger }, { did, resolver });
    } finally {
      // Both at once: the provider's settler may be talking to the agent as they close.
      await Promise.all(hosts.map((host) => host.close()));
    }
  },
};

/** The escrow agent and a provider whose payee id there is its did:key. */
async function startAgents(
  ctx: DemoContext,
  hosts: { close(): Promise<void> }[],
): Promise<{ agent: RunningHost; provider: RunningHost; did: string; ledger: KyselyEscrowStore }> {
  const agent = await start(ctx, {
    name: 'identity-escrow-agent',
    modules: [escrowModule({ tickMs: 50, settings: { minChallengeWindowMs: 500 } })],
    tokens: [BUYER_TOKEN, PROVIDER_TOKEN],
  });
  hosts.push(agent);
  expectThat(agent.database !== undefined, 'the escrow agent to keep its ledger in a database');
  const ledger = new KyselyEscrowStore(agent.database);
  await ledger.credit('', 'agent:buyer', 1_000_000_000n);
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const key = didKeyOf(publicKey);
  const provider = await start(ctx, {
    name: 'identity-provider',
    modules: [
      acmpModule({
        capabilities: demoCapabilities({ stepMs: 5 }),
        negotiation: {},
        signer: createKeySigner(key, privateKey),
        escrowAgent: {
          agentUrl: agent.url,
          token: secretOf(PROVIDER_TOKEN),
          caCert: ctx.caCert,
          payeeId: key.did,
          claimDelayMs: 100,
          settleEveryMs: 50,
        },
      }),
    ],
  });
  hosts.push(provider);
  return { agent, provider, did: key.did, ledger };
}

/** The same quote through a proxy that halves every `price_cu` (N19): refused -36003, never accepted. */
async function tamperedQuote(ctx: DemoContext, providerUrl: string): Promise<void> {
  const proxy = await startTamperProxy(providerUrl, {
    caCert: ctx.caCert,
    rewrite: (body) =>
      body.replace(/"price_cu":([0-9.e-]+)/g, (_, p: string) => `"price_cu":${Number(p) / 2}`),
  });
  try {
    const card = await fetchAgentCard(providerUrl, { caCert: ctx.caCert });
    const routed = {
      ...card,
      supportedInterfaces: card.supportedInterfaces.map((i) => ({
        ...i,
        url: i.url.replace(providerUrl, proxy.url),
      })),
    };
    const buyer = await createAcmpBuyer({ card: routed });
    const refused = await buyer.quote({ capability: 'sentiment-analysis', proof_method: 'result-hash' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expectThat(isAcmpError(refused, -36003), 'the tampered offer to be refused -36003');
    const { check } = expectShape(RefusalDataSchema, refused.data, 'the refusal to name its check');
    ctx.say(
      `   the same quote through a proxy that halves price_cu → refused: ${refused.code} ${refused.message} (check ${check}); nothing accepted`,
    );
  } finally {
    await proxy.close();
  }
}

/** The `data` of a Layer 7 §7 refusal: the check that failed. */
const RefusalDataSchema = z.looseObject({ check: z.string() });

/** An escrowStatus claim [L4 §4.7] with the payee's Layer 7 §4.1 envelope `sig`, as the demo prints it. */
const SignedClaimSchema = z.looseObject({
  amount_cu: z.number(),
  sig: z.looseObject({ did: z.string(), alg: z.string(), payload_hash: z.string() }),
});

/**
 * A silent buyer: the provider claims, signed by its DID; the agent shows the envelope in escrowStatus
 * and keeps the claim as received, which verifies again (as an arbiter would check it).
 */
async function signedClaim(
  ctx: DemoContext,
  parties: { buyer: EscrowBuyer; ledger: KyselyEscrowStore },
  expected: { did: string; resolver: ReturnType<typeof createDidResolver> },
): Promise<void> {
  const { buyer, ledger } = parties;
  const payee = buyer.escrowAgents[0]?.payeeId;
  expectThat(payee === expected.did, "the provider's payee id at the escrow agent to be its DID");
  const { escrowId, result } = await invokeUnderEscrow(buyer, payee, { lock: { challengeWindowMs: 60_000 } });
  const stop = new AbortController();
  let claimed: unknown;
  for await (const status of buyer.escrow.watch(escrowId, { signal: stop.signal })) {
    if (status.state !== 'claimed') continue;
    claimed = status.claim;
    break;
  }
  stop.abort();
  const claim = expectShape(SignedClaimSchema, claimed, 'the provider to claim, signed by its DID');
  const { sig } = claim;
  ctx.say(
    `   invoke on ${escrowId} for ${result.cost_cu} CU, buyer silent → acmp/escrowClaim ${claim.amount_cu} CU accepted`,
  );
  const kept = (await ledger.get(escrowId))?.claim?.signed;
  const verified = await verifyObject(kept, { resolver: expected.resolver, expectedDid: expected.did });
  expectThat(verified.did === sig.did, 'the kept claim to verify as the envelope shown');
  ctx.say(
    `   escrowStatus claim.sig: did ${short(sig.did)}, ${sig.alg}, payload_hash ${sig.payload_hash.slice(0, 19)}…; the claim kept verifies as ${short(verified.did)}`,
  );
}

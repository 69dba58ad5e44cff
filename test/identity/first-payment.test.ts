import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createA2AAcmpBuyer } from '../../src/connect/a2a-acmp-buyer.js';
import { fetchAgentCard } from '../../src/a2a/client.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import { createDidResolver } from '../../src/acmp/identity/resolver.js';
import type { Signer } from '../../src/acmp/identity/signer.js';
import { createAcmpBuyer as pickAcmpBuyer } from '../../src/connect/acmp-buyer.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { connectMcpAcmpBuyer } from '../../src/mcp/buyer.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { escrowHost, secret } from '../escrow/helpers.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { didKeyIdentity, tamperingProxy } from '../helpers/identity.js';

afterEach(cleanup);

const PAID = {
  capability: 'sentiment-analysis',
  input: { type: 'text', data: 'Revenue grew 12% YoY.' },
  max_price_cu: 0.005,
};

async function provider(signer: Signer) {
  return startTestHost({
    modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 1 }), negotiation: {}, signer })],
  });
}

/** A signer that names one did:key (the capability object's DID) but signs with another key. */
function impostor(): Signer {
  const named = didKeyIdentity().signer;
  const other = didKeyIdentity().signer;
  return {
    did: named.did,
    verificationMethod: named.verificationMethod,
    alg: named.alg,
    sign: (data, o) => other.sign(data, o),
  };
}

/** A replay in transit: every proveIdentity answer's envelope gets another payload hash. */
const replayAnswers = (body: string) =>
  body.includes('"envelope"')
    ? body.replace(/"payload_hash":"sha256:[0-9a-f]{64}"/g, `"payload_hash":"sha256:${'0'.repeat(64)}"`)
    : body;

async function codeOf(work: Promise<unknown>): Promise<{ code: number; data: unknown }> {
  try {
    await work;
  } catch (error) {
    if (error instanceof AcmpError) return { code: error.code, data: error.data };
    throw error;
  }
  throw new Error('expected an ACMP error');
}

const sent = (requests: string[], method: string) => requests.filter((r) => r.includes(method)).length;

describe('buyers challenge a provider before the first payment to it (Layer 7 §3)', () => {
  it('A2A: one proveIdentity before the first paid invoke, none after', async () => {
    const { signer } = didKeyIdentity();
    const host = await provider(signer);
    const proxy = await tamperingProxy(host.url, (body) => body);
    const buyer = await createAcmpBuyer({ card: proxy.route(await fetchAgentCard(host.url)) });
    await buyer.invoke(PAID);
    await buyer.invoke(PAID);
    expect(sent(proxy.requests, 'acmp/proveIdentity')).toBe(1);
    // A proof the buyer asked for itself counts too.
    const again = await createAcmpBuyer({ card: proxy.route(await fetchAgentCard(host.url)) });
    await again.proveIdentity({ resolver: createDidResolver() });
    await again.invoke(PAID);
    expect(sent(proxy.requests, 'acmp/proveIdentity')).toBe(2);
    const first = proxy.requests.findIndex((r) => r.includes('acmp/proveIdentity'));
    expect(proxy.requests.findIndex((r) => r.includes('acmp/invoke'))).toBeGreaterThan(first);
  });

  it('A2A: a replayed answer (not over this nonce) is -36001 and nothing is invoked or accepted', async () => {
    const { signer } = didKeyIdentity();
    const host = await provider(signer);
    const proxy = await tamperingProxy(host.url, replayAnswers);
    const buyer = await createAcmpBuyer({ card: proxy.route(await fetchAgentCard(host.url)) });
    expect(await codeOf(buyer.invoke(PAID))).toEqual({ code: -36001, data: { check: 'nonce' } });
    const offer = await buyer.quote({ capability: 'sentiment-analysis' });
    expect((await codeOf(buyer.accept({ offer_id: offer.offer_id }))).code).toBe(-36001);
    expect((await codeOf(buyer.negotiate({ capability: 'sentiment-analysis' }))).code).toBe(-36001);
    expect(sent(proxy.requests, 'acmp/invoke')).toBe(0);
    expect(sent(proxy.requests, 'acmp/accept')).toBe(0);
    // A failure is not remembered: each paying operation challenged again.
    expect(sent(proxy.requests, 'acmp/proveIdentity')).toBe(3);
  });

  it('A2A escrow: the lock goes through, the bind to the provider waits for the proof and is refused', async () => {
    const { signer, did } = didKeyIdentity();
    const host = await provider(signer);
    const escrow = await escrowHost();
    await escrow.credit('agent:buyer', '1');
    const proxy = await tamperingProxy(host.url, replayAnswers);
    const buyer = await createA2AAcmpBuyer({
      card: proxy.route(await fetchAgentCard(host.url)),
      escrow: { agentUrl: escrow.host.url, token: secret('buyer') },
    });
    const escrowId = await buyer.escrow!.lock(0.01, Date.now() + 600_000);
    expect((await codeOf(buyer.escrow!.bind(escrowId, did))).code).toBe(-36001);
    expect(await buyer.escrow!.status(escrowId)).toMatchObject({ state: 'open', payee_id: null });
  });

  it("identityChallenge: 'off' pays without a challenge", async () => {
    const { signer } = didKeyIdentity();
    const host = await provider(signer);
    const proxy = await tamperingProxy(host.url, replayAnswers);
    const buyer = await createAcmpBuyer({
      card: proxy.route(await fetchAgentCard(host.url)),
      identityChallenge: 'off',
    });
    expect((await buyer.invoke(PAID)).output).toBeDefined();
    expect(sent(proxy.requests, 'acmp/proveIdentity')).toBe(0);
  });

  it('MCP: a provider signing with another key than its DID names is refused -36001 before the invoke', async () => {
    const host = await provider(impostor());
    const buyer = await connectMcpAcmpBuyer({ endpoint: { url: `${host.url}/mcp` } });
    try {
      // Had the invoke been sent, its result would have been refused -36003 instead.
      expect(await codeOf(buyer.invoke(PAID))).toEqual({ code: -36001, data: { check: 'signature' } });
      const offer = await codeOf(buyer.quote({ capability: 'sentiment-analysis' }));
      expect(offer.code).toBe(-36003);
    } finally {
      await buyer.close();
    }
  });

  it('the binding-picking buyer passes the policy on (MCP picked): on by default, off by flag', async () => {
    const host = await provider(impostor());
    const on = await pickAcmpBuyer({ agentUrl: host.url, prefer: ['mcp'] });
    const off = await pickAcmpBuyer({ agentUrl: host.url, prefer: ['mcp'], identityChallenge: 'off' });
    try {
      expect((await codeOf(on.invoke(PAID))).code).toBe(-36001);
      // Off, the invoke runs and it is its result that is refused (signed by another key).
      expect((await codeOf(off.invoke(PAID))).code).toBe(-36003);
    } finally {
      await on.close();
      await off.close();
    }
  });

  it("'before-first-payment' for a provider without a DID is a configuration error", async () => {
    const host = await startTestHost({ modules: [acmpModule({ capabilities: demoCapabilities() })] });
    await expect(
      createAcmpBuyer({ agentUrl: host.url, identityChallenge: 'before-first-payment' }),
    ).rejects.toThrow(/needs the provider DID/);
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    expect((await buyer.invoke(PAID)).output).toBeDefined();
  });
});

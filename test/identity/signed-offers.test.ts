import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { fetchAgentCard } from '../../src/a2a/client.js';
import { codeOf } from '../acmp/helpers.js';
import { createDidResolver } from '../../src/acmp/identity/resolver.js';
import type { Signer } from '../../src/acmp/identity/signer.js';
import { verifyObject } from '../../src/acmp/identity/verify.js';
import type { Offer } from '../../src/acmp/wire/negotiation-messages.js';
import { offerHash } from '../../src/acmp/negotiation/session.js';
import { connectMcpAcmpBuyer } from '../../src/mcp/buyer.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import type { HostFlags } from '../../src/server/config.js';
import { cleanup, onCleanup, startTestHost } from '../helpers/host.js';
import { didKeyIdentity, tamperingProxy } from '../helpers/identity.js';

afterEach(cleanup);

const SENTIMENT = {
  capability: 'sentiment-analysis',
  input: { type: 'text', data: 'Revenue grew 12% YoY.' },
  max_price_cu: 0.005,
  proof_method: 'result-hash',
};

/** A provider host negotiating flat and in sessions, signing with `signer` when given. */
async function provider(signer?: Signer, flags: HostFlags = {}) {
  return startTestHost({
    flags,
    modules: [
      acmpModule({
        capabilities: demoCapabilities({ stepMs: 2 }),
        heartbeatIntervalMs: 200,
        negotiation: { sessions: true },
        ...(signer ? { signer } : {}),
      }),
    ],
  });
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every object under `node` (depth first), `node` included. */
function* objectsIn(node: unknown): Generator<Json> {
  if (Array.isArray(node)) for (const item of node) yield* objectsIn(item);
  else if (isObject(node)) {
    yield node;
    for (const value of Object.values(node)) yield* objectsIn(value);
  }
}

/**
 * A man in the middle who knows the session profile: halves the price of each session offer and
 * recomputes the message's `offer_hash`, so only the provider's signature can tell.
 */
function tamperSessionOffers(body: string): string {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return body;
  }
  for (const message of objectsIn(json)) {
    if (!Array.isArray(message.parts) || !isObject(message.metadata)) continue;
    const offer = [...objectsIn(message.parts)].find((o) => isObject(o.acmp_result))?.acmp_result;
    if (!isObject(offer) || typeof offer.price_cu !== 'number') continue;
    offer.price_cu /= 2;
    for (const meta of Object.values(message.metadata))
      if (isObject(meta) && 'offer_hash' in meta) meta.offer_hash = offerHash(offer as Offer);
  }
  return JSON.stringify(json);
}

/** An independent check of an envelope: the object verifies as signed by `did`. */
const signedBy = (object: unknown, did: string) =>
  verifyObject(object, { resolver: createDidResolver(), expectedDid: did });

describe('providers sign offers and results (Layer 7 §4.1), buyers verify them against the card DID', () => {
  it('over A2A: the card advertises the DID; flat and session offers and the result (proof included) verify', async () => {
    const { did, signer } = didKeyIdentity();
    const host = await provider(signer);
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    expect((buyer.capabilityObject as { did?: string }).did).toBe(did);
    const offer = await buyer.quote({ capability: 'sentiment-analysis', proof_method: 'result-hash' });
    expect((await signedBy(offer, did)).did).toBe(did);
    const agreement = await buyer.negotiate({
      capability: 'sentiment-analysis',
      proof_method: 'result-hash',
      mode: 'session',
      counter: (o, context) => (context.round === 1 ? { price_cu: o.price_cu / 2 } : 'accept'),
    });
    await signedBy(agreement.offer, did);
    const result = await buyer.invoke({ agreement, input: SENTIMENT.input });
    expect(result.proof).toBeDefined();
    // Not streamed: the result is exactly the object the provider signed, its proof included.
    await signedBy(result, did);
  });

  it('over A2A: a streamed result (no output, output_streamed: true) carries its own valid envelope', async () => {
    const { did, signer } = didKeyIdentity();
    const host = await provider(signer);
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    let signed: unknown;
    for await (const event of buyer.stream({ ...SENTIMENT, stream: true }))
      if (event.kind === 'result') signed = event.result;
    expect(signed).toMatchObject({ output_streamed: true, sig: { did } });
    expect(signed).not.toHaveProperty('output');
    await signedBy(signed, did);
  });

  it.each(['JSONRPC', 'HTTP+JSON', 'GRPC'] as const)(
    'over A2A %s: the offer and the result arrive signed, and the buyer verified them',
    async (transport) => {
      const { did, signer } = didKeyIdentity();
      const host = await provider(signer, transport === 'GRPC' ? { 'grpc-port': '0' } : {});
      const buyer = await createAcmpBuyer({ agentUrl: host.url, transport });
      const agreement = await buyer.negotiate({
        capability: 'sentiment-analysis',
        proof_method: 'result-hash',
      });
      await signedBy(agreement.offer, did);
      await signedBy(await buyer.invoke({ agreement, input: SENTIMENT.input }), did);
    },
  );

  it('over MCP: the server capabilities advertise the DID and the buyer verifies the signed result', async () => {
    const { did, signer } = didKeyIdentity();
    const host = await provider(signer);
    const buyer = await connectMcpAcmpBuyer({ endpoint: { url: `${host.url}/mcp` } });
    onCleanup(() => buyer.close());
    expect((buyer.capabilityObject as { did?: string }).did).toBe(did);
    const result = await buyer.invoke(SENTIMENT);
    expect(result.sig).toMatchObject({ did, alg: 'EdDSA' });
    await signedBy(result, did);
  });
});

describe('what a buyer refuses (Layer 7 §3, §4; -36003)', () => {
  it('N19: an offer whose price changed in transit is refused; nothing is accepted', async () => {
    const { signer } = didKeyIdentity();
    const host = await provider(signer);
    // The man in the middle halves every price the provider quotes.
    const proxy = await tamperingProxy(host.url, (body) =>
      body.replace(/"price_cu":([0-9.e-]+)/g, (_m, price: string) => `"price_cu":${Number(price) / 2}`),
    );
    const card = proxy.route(await fetchAgentCard(host.url));
    const buyer = await createAcmpBuyer({ card });
    const refused = await codeOf(buyer.negotiate({ capability: 'sentiment-analysis' }));
    expect(refused).toMatchObject({ code: -36003, data: { check: 'payload_hash' } });
    expect(proxy.requests.some((body) => body.includes('acmp/accept'))).toBe(false);
    // The provider holds no agreement: its (untampered) offer is still acceptable, here with an escrow.
    const direct = await createAcmpBuyer({ agentUrl: host.url });
    const offer = await direct.quote({ capability: 'sentiment-analysis' });
    const ack = await direct.accept({ offer_id: offer.offer_id, escrow_id: 'esc_probe' });
    expect(ack.escrow_id).toBe('esc_probe');
  });

  it('a session offer tampered in transit, its offer_hash recomputed, is refused and the session is left', async () => {
    const { signer } = didKeyIdentity();
    const host = await provider(signer);
    const proxy = await tamperingProxy(host.url, tamperSessionOffers);
    const buyer = await createAcmpBuyer({ card: proxy.route(await fetchAgentCard(host.url)) });
    const refused = await codeOf(buyer.negotiate({ capability: 'sentiment-analysis', mode: 'session' }));
    expect(refused).toMatchObject({ code: -36003, data: { check: 'payload_hash' } });
    expect(proxy.requests.some((body) => body.includes('acmp/accept'))).toBe(false);
    expect(proxy.requests.some((body) => /"method":"CancelTask"/.test(body))).toBe(true);
  });

  it('substitution: a result signed by another did:key than the one expected is refused', async () => {
    const impostor = didKeyIdentity();
    const expected = didKeyIdentity();
    const host = await provider(impostor.signer);
    // The challenge before the first payment (Layer 7 §3) refuses first; off, the result check does.
    const challenging = await createAcmpBuyer({
      agentUrl: host.url,
      signatures: { expectedDid: expected.did },
    });
    expect(await codeOf(challenging.invoke(SENTIMENT))).toEqual({ code: -36001, data: { check: 'did' } });
    const buyer = await createAcmpBuyer({
      agentUrl: host.url,
      signatures: { expectedDid: expected.did },
      identityChallenge: 'off',
    });
    expect(await codeOf(buyer.invoke(SENTIMENT))).toMatchObject({ code: -36003, data: { check: 'did' } });
    expect(await codeOf(buyer.quote({ capability: 'sentiment-analysis' }))).toMatchObject({
      code: -36003,
      data: { check: 'did' },
    });
  });

  it('an unsigned result from a provider whose DID the buyer expects is refused; without a DID nothing is checked', async () => {
    const host = await provider();
    const { did } = didKeyIdentity();
    const strict = await createAcmpBuyer({
      agentUrl: host.url,
      signatures: { expectedDid: did },
      identityChallenge: 'off',
    });
    expect(await codeOf(strict.invoke(SENTIMENT))).toMatchObject({
      code: -36003,
      data: { reason: 'unsigned' },
    });
    const lenient = await createAcmpBuyer({
      agentUrl: host.url,
      signatures: { expectedDid: did, requireSignatures: false },
      identityChallenge: 'off',
    });
    expect((await lenient.invoke(SENTIMENT)).cost_cu).toBeGreaterThan(0);
    const layer4Only = await createAcmpBuyer({ agentUrl: host.url });
    expect((await layer4Only.invoke(SENTIMENT)).sig).toBeUndefined();
  });

  it('over MCP: a result signed by another DID is refused', async () => {
    const impostor = didKeyIdentity();
    const host = await provider(impostor.signer);
    const buyer = await connectMcpAcmpBuyer({
      endpoint: { url: `${host.url}/mcp` },
      signatures: { expectedDid: didKeyIdentity().did },
      identityChallenge: 'off',
    });
    onCleanup(() => buyer.close());
    expect(await codeOf(buyer.invoke(SENTIMENT))).toMatchObject({ code: -36003, data: { check: 'did' } });
  });

  it('over MCP: a quoted offer is verified against the advertised DID, and one signed by another DID is refused', async () => {
    const { signer, did } = didKeyIdentity();
    const host = await provider(signer);
    const buyer = await connectMcpAcmpBuyer({ endpoint: { url: `${host.url}/mcp` } });
    onCleanup(() => buyer.close());
    const offer = await buyer.quote({ capability: 'sentiment-analysis', proof_method: 'result-hash' });
    expect(offer.sig).toMatchObject({ did });
    const wary = await connectMcpAcmpBuyer({
      endpoint: { url: `${host.url}/mcp` },
      signatures: { expectedDid: didKeyIdentity().did },
    });
    onCleanup(() => wary.close());
    expect(await codeOf(wary.quote({ capability: 'sentiment-analysis' }))).toMatchObject({
      code: -36003,
      data: { check: 'did' },
    });
  });
});

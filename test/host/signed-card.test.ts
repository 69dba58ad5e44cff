import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FlattenedSign } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyAgentCardSignature, type AgentCard } from '@a2a-js/sdk';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { verifyAgentCard } from '../../src/a2a/card-signature.js';
import { fetchAgentCard } from '../../src/a2a/client.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import {
  createDidResolver,
  createKeySigner,
  didKeyOf,
  publicKeyOf,
  signingMethod,
  type Signer,
} from '../../src/acmp/identity/index.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { cleanup, onCleanup, startTestHost } from '../helpers/host.js';

afterEach(async () => {
  vi.restoreAllMocks();
  await cleanup();
});

const V1 = { 'A2A-Version': '1.0' };
const CARD_PATH = '/.well-known/agent-card.json';

function didKeySigner(type: 'ed25519' | 'ec' = 'ed25519'): Signer {
  const { publicKey, privateKey } =
    type === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return createKeySigner(didKeyOf(publicKey), privateKey);
}

async function signedHost(signer: Signer) {
  return startTestHost({ signer, modules: [acmpModule({ capabilities: demoCapabilities() })] });
}

async function cardJson(url: string, headers: Record<string, string> = V1): Promise<Record<string, unknown>> {
  return (await (await fetch(`${url}${CARD_PATH}`, { headers })).json()) as Record<string, unknown>;
}

/** Serves `card` as the agent card of a throwaway server (a tampering intermediary). */
async function serveCard(card: unknown): Promise<string> {
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(card));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The SDK's own verifier with keys from the DID documents our resolver returns. */
const sdkVerify = verifyAgentCardSignature(async (kid) => {
  const did = kid.split('#')[0]!;
  const method = signingMethod(await createDidResolver().resolve(did), kid);
  const key = method ? publicKeyOf(method) : undefined;
  if (!key) throw new Error('no key');
  return key;
});

describe('signed agent card (A2A §8.4)', () => {
  it.each(['ed25519', 'ec'] as const)(
    'the host signs its %s card: kid is its verification method, and the SDK verifier accepts it',
    async (type) => {
      const signer = didKeySigner(type);
      const host = await signedHost(signer);
      const card = await cardJson(host.url);
      const [signature] = card.signatures as { protected: string; signature: string }[];
      expect(JSON.parse(Buffer.from(signature!.protected, 'base64url').toString('utf8'))).toEqual({
        alg: signer.alg,
        typ: 'JOSE',
        kid: signer.verificationMethod,
      });
      await expect(sdkVerify(card as unknown as AgentCard)).resolves.toBeUndefined();
    },
  );

  it('the SDK verifier rejects a tampered card', async () => {
    const host = await signedHost(didKeySigner());
    const card = await cardJson(host.url);
    // The SDK's verifier reports each failed entry on console.debug.
    vi.spyOn(console, 'debug').mockImplementation(() => {});
    await expect(sdkVerify({ ...card, name: 'Mallory' } as unknown as AgentCard)).rejects.toThrow();
  });

  it('our client verifies the signed card against the expected DID', async () => {
    const signer = didKeySigner();
    const host = await signedHost(signer);
    const card = await fetchAgentCard(host.url, { cardDid: signer.did, requireSignedCard: true });
    expect(card.signatures).toHaveLength(1);
  });

  it('refuses a tampered signed card with -36003', async () => {
    const signer = didKeySigner();
    const host = await signedHost(signer);
    const card = await cardJson(host.url);
    const url = await serveCard({ ...card, description: 'Cheaper than ever' });
    await expect(fetchAgentCard(url, { cardDid: signer.did })).rejects.toMatchObject({
      code: -36003,
      data: { check: 'agent_card', reason: 'signature' },
    });
  });

  it('a card signed by another DID than the expected one (default: the did:web of its URL) counts as unsigned', async () => {
    const host = await signedHost(didKeySigner());
    await expect(fetchAgentCard(host.url)).resolves.toBeDefined();
    await expect(fetchAgentCard(host.url, { requireSignedCard: true })).rejects.toMatchObject({
      code: -36003,
      data: { check: 'agent_card', reason: 'did' },
    });
    await expect(
      fetchAgentCard(host.url, { cardDid: didKeySigner().did, requireSignedCard: true }),
    ).rejects.toMatchObject({ code: -36003, data: { reason: 'did' } });
  });

  it('a signature whose DID does not resolve counts as unsigned, and fails a required signature', async () => {
    const signer = didKeySigner();
    const card = await cardJson((await signedHost(signer)).url);
    const resolver = { resolve: () => Promise.reject(new AcmpError(-36002, { reason: 'notFound' })) };
    const options = { resolver, expectedDid: signer.did };
    await expect(verifyAgentCard(card, options)).resolves.toBe(false);
    await expect(verifyAgentCard(card, { ...options, requireSigned: true })).rejects.toMatchObject({
      code: -36003,
      data: { reason: 'did_unresolvable' },
    });
  });

  it('an unsigned card passes unless a signed one is required; buyers pass the requirement on', async () => {
    const host = await startTestHost({ modules: [acmpModule({ capabilities: demoCapabilities() })] });
    expect((await fetchAgentCard(host.url)).signatures ?? []).toEqual([]);
    await expect(fetchAgentCard(host.url, { requireSignedCard: true })).rejects.toMatchObject({
      code: -36003,
      data: { check: 'agent_card', reason: 'unsigned' },
    });
    await expect(createAcmpBuyer({ agentUrl: host.url, requireSignedCard: true })).rejects.toMatchObject({
      code: -36003,
    });
  });

  it('the v0.3 shape is served unsigned; a v0.3 card signed by the v0.3 rule (JCS as received) verifies', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const { did, verificationMethod } = didKeyOf(publicKey);
    const host = await signedHost(createKeySigner({ did, verificationMethod }, privateKey));
    const v03 = await cardJson(host.url, {});
    expect(v03).toHaveProperty('protocolVersion');
    expect(v03.signatures ?? []).toEqual([]);
    const jws = await new FlattenedSign(Buffer.from(canonicalJson(v03), 'utf8'))
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JOSE', kid: verificationMethod })
      .sign(privateKey);
    const signed = { ...v03, signatures: [{ protected: jws.protected, signature: jws.signature }] };
    const url = await serveCard(signed);
    await expect(fetchAgentCard(url, { cardDid: did, requireSignedCard: true })).resolves.toBeDefined();
    const tampered = await serveCard({ ...signed, description: 'Cheaper than ever' });
    await expect(fetchAgentCard(tampered, { cardDid: did })).rejects.toMatchObject({ code: -36003 });
  });
});

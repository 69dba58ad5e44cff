import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { fetchAgentCard } from '../../src/a2a/client.js';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { addKey } from '../../src/acmp/identity/key-ring.js';
import { createDidResolver } from '../../src/acmp/identity/resolver.js';
import { connectMcpAcmpBuyer } from '../../src/mcp/buyer.js';
import { fetchTrusting } from '../../src/shared/fetch.js';
import { acmpHost, type AcmpTestHost } from '../acmp/helpers.js';
import { cleanup, tempDir } from '../helpers/host.js';
import type { A2ATransport } from '../helpers/transports.js';

afterEach(cleanup);

const PROVIDER_ID = 'agent:identity-test:local';

/** A TLS host whose identity key file holds one key, and a verifier trusting its certificate. */
async function identityHost(
  transport: A2ATransport = 'jsonrpc',
): Promise<AcmpTestHost & { keyFile: string }> {
  const keyFile = join(tempDir(), 'identity', 'keys.json');
  addKey(keyFile);
  const host = await acmpHost({
    transport,
    providerId: PROVIDER_ID,
    flags: { 'tls-self-signed': true, 'identity-key': keyFile },
  });
  return { ...host, keyFile };
}

function resolverFor(host: { tls: { cert: string } | undefined }): ReturnType<typeof createDidResolver> {
  return createDidResolver({ fetch: fetchTrusting(host.tls?.cert) });
}

function didOf(host: { url: string }): string {
  return `did:web:${encodeURIComponent(new URL(host.url).host)}`;
}

async function refusal(work: Promise<unknown>): Promise<{ code: number; data: unknown }> {
  const error = (await work.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: number; data: unknown } | undefined;
  expect(error).toBeDefined();
  return { code: error?.code ?? 0, data: error?.data };
}

describe('the host DID (Layer 7 §2.2)', () => {
  it('is in the capability object with provider_id, and its document at /.well-known/did.json lists the alias', async () => {
    const host = await identityHost();
    const card = await fetchAgentCard(host.url, { caCert: host.tls?.cert });
    const params = card.capabilities?.extensions?.find((e) => e.uri === ACMP_EXTENSION_URI)?.params;
    expect(params).toMatchObject({ did: didOf(host), provider_id: PROVIDER_ID });
    expect((params as { accepts: string[] }).accepts).toContain('acmp/proveIdentity');
    const response = await fetchTrusting(host.tls?.cert)(`${host.url}/.well-known/did.json`);
    expect(response.headers.get('content-type')).toMatch(/^application\/did\+json/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
    const doc = (await response.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({ id: didOf(host), alsoKnownAs: [PROVIDER_ID] });
    expect(JSON.stringify(doc)).not.toMatch(/"d":/);
  });

  it('a host without keys advertises no DID, serves no document, and answers proveIdentity -32601', async () => {
    const host = await acmpHost({ flags: { 'identity-key': join(tempDir(), 'none.json') } });
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    expect(buyer.capabilityObject.did).toBeUndefined();
    expect((await fetch(`${host.url}/.well-known/did.json`)).status).toBe(404);
    expect(await refusal(buyer.proveIdentity({ resolver: createDidResolver() }))).toMatchObject({
      code: -36001,
      data: { check: 'did' },
    });
    expect(
      await refusal(buyer.proveIdentity({ resolver: createDidResolver(), expectedDid: 'did:web:x.example' })),
    ).toMatchObject({ code: -32601 });
  });
});

describe('the host identity key file (docs/acmp-identity.md "Where keys live")', () => {
  it('a host refuses to start on a key file others can read', async () => {
    const keyFile = join(tempDir(), 'keys.json');
    addKey(keyFile);
    chmodSync(keyFile, 0o644);
    await expect(acmpHost({ flags: { 'identity-key': keyFile } })).rejects.toThrow(/readable by others/);
  });
});

describe('acmp/proveIdentity (Layer 7 §3) on every binding', () => {
  for (const transport of ['jsonrpc', 'grpc'] as const) {
    it(`A2A ${transport}: the buyer's challenge verifies against the advertised did:web over HTTPS`, async () => {
      const host = await identityHost(transport);
      const buyer = await createAcmpBuyer({
        agentUrl: host.url,
        caCert: host.tls?.cert,
        transport: transport === 'grpc' ? 'GRPC' : 'JSONRPC',
      });
      const verified = await buyer.proveIdentity({ resolver: resolverFor(host) });
      expect([verified.did, verified.verificationMethod, verified.alg]).toEqual([
        didOf(host),
        `${didOf(host)}#key-1`,
        'EdDSA',
      ]);
    });
  }

  it('A2A REST (HTTP+JSON): the same', async () => {
    const host = await identityHost();
    const buyer = await createAcmpBuyer({
      agentUrl: host.url,
      caCert: host.tls?.cert,
      transport: 'HTTP+JSON',
    });
    expect((await buyer.proveIdentity({ resolver: resolverFor(host) })).did).toBe(didOf(host));
  });

  it('MCP: the same, from the same provider', async () => {
    const host = await identityHost();
    const buyer = await connectMcpAcmpBuyer({ endpoint: { url: `${host.url}/mcp` }, caCert: host.tls?.cert });
    try {
      expect(buyer.capabilityObject.did).toBe(didOf(host));
      expect((await buyer.proveIdentity({ resolver: resolverFor(host) })).did).toBe(didOf(host));
    } finally {
      await buyer.close();
    }
  });

  it('another expected DID (the substitution attack) fails -36001 did', async () => {
    const host = await identityHost();
    const other = await identityHost();
    const buyer = await createAcmpBuyer({ agentUrl: host.url, caCert: host.tls?.cert });
    expect(
      await refusal(buyer.proveIdentity({ resolver: resolverFor(host), expectedDid: didOf(other) })),
    ).toEqual({ code: -36001, data: { check: 'did' } });
  });

  it('a DID whose document cannot be fetched (untrusted certificate) fails -36002', async () => {
    const host = await identityHost();
    const buyer = await createAcmpBuyer({ agentUrl: host.url, caCert: host.tls?.cert });
    expect(await refusal(buyer.proveIdentity({ resolver: createDidResolver() }))).toMatchObject({
      code: -36002,
      data: { reason: 'notFound' },
    });
  });
});

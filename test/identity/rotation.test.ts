import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { signObject } from '../../src/acmp/identity/envelope.js';
import { createWebIdentity } from '../../src/acmp/identity/host-identity.js';
import { addKey, openKeyRing, retireKey } from '../../src/acmp/identity/key-ring.js';
import { createDidResolver, DEFAULT_DID_CACHE_TTL_MS } from '../../src/acmp/identity/resolver.js';
import { verifyObject } from '../../src/acmp/identity/verify.js';
import { fetchTrusting } from '../../src/shared/fetch.js';
import { acmpHost } from '../acmp/helpers.js';
import { cleanup, tempDir } from '../helpers/host.js';

afterEach(cleanup);

describe('key rotation and retirement (Layer 7 §2, open question "revocation latency")', () => {
  it('a new key verifies at once; a retired key verifies until the cached document expires, then -36003', async () => {
    const keyFile = join(tempDir(), 'identity', 'keys.json');
    addKey(keyFile);
    const host = await acmpHost({ flags: { 'tls-self-signed': true, 'identity-key': keyFile } });
    // The operator's side: signing with the host's key file, as the host does.
    const operator = createWebIdentity({ keys: openKeyRing(keyFile), baseUrl: () => host.url });
    let now = 1_000_000;
    const resolver = createDidResolver({ fetch: fetchTrusting(host.tls?.cert), clock: { now: () => now } });
    const expectedDid = operator.did;

    const byKey1 = await signObject({ offer_id: 'o1', price_cu: 2 }, operator.signer());
    expect((await verifyObject(byKey1, { resolver, expectedDid })).verificationMethod).toMatch(/#key-1$/);

    addKey(keyFile);
    now += 1_000;
    const byKey2 = await signObject({ offer_id: 'o2', price_cu: 2 }, operator.signer());
    // The cached document predates key-2: the verifier refreshes it once on the unknown method.
    expect((await verifyObject(byKey2, { resolver, expectedDid })).verificationMethod).toMatch(/#key-2$/);
    const buyer = await createAcmpBuyer({ agentUrl: host.url, caCert: host.tls?.cert });
    expect((await buyer.proveIdentity({ resolver })).verificationMethod).toMatch(/#key-2$/);

    retireKey(keyFile, 'key-1');
    now += 1_000;
    await expect(verifyObject(byKey1, { resolver, expectedDid })).resolves.toBeDefined();
    now += DEFAULT_DID_CACHE_TTL_MS;
    const error = await verifyObject(byKey1, { resolver, expectedDid }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -36003, data: { check: 'verification_method' } });
    await expect(verifyObject(byKey2, { resolver, expectedDid })).resolves.toBeDefined();
  });
});

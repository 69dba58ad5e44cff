import { afterEach, describe, expect, it } from 'vitest';
import { createEscrowClient } from '../../src/a2a/escrow/client.js';
import { signingEscrowClient } from '../../src/a2a/escrow/signing-client.js';
import { ESCROW_METHOD as M } from '../../src/acmp/escrow/constants.js';
import { startTamperProxy } from '../../src/cli/demo/tamper-proxy.js';
import { cleanup, onCleanup } from '../helpers/host.js';
import { didKeyIdentity } from '../helpers/identity.js';
import { escrowHost, secret } from './helpers.js';

afterEach(cleanup);

describe('escrow client: status replies decoded (L4 §4.7)', () => {
  it('rejects a status reply without remaining_cu with -33099, not a mistyped status', async () => {
    const agent = await escrowHost();
    await agent.credit('agent:buyer', '1');
    const buyer = await agent.client('buyer');
    const locked = await buyer.call(M.lock, {
      op_ref: 'l1',
      amount_cu: 0.01,
      valid_until_ms: Date.now() + 3_600_000,
    });
    const escrowId = locked.escrow_id as string;
    expect(await buyer.status(escrowId)).toMatchObject({ escrow_id: escrowId, remaining_cu: 0.01 });
    const origin = new URL(agent.host.url).origin;
    let proxyOrigin = '';
    const proxy = await startTamperProxy(origin, {
      caCert: undefined,
      rewrite: (body) => body.replaceAll(origin, proxyOrigin).replaceAll('"remaining_cu":', '"remaining":'),
    });
    onCleanup(() => proxy.close());
    proxyOrigin = proxy.url;
    const tampered = await createEscrowClient({ agentUrl: proxy.url, token: secret('buyer') });
    const malformed = { code: -33099, data: { reason: 'escrow_status_malformed' } };
    await expect(tampered.status(escrowId)).rejects.toMatchObject(malformed);
    const signing = signingEscrowClient(tampered, didKeyIdentity().signer);
    await expect(signing.status(escrowId)).rejects.toMatchObject(malformed);
  });
});

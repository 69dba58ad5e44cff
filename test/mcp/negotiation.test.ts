import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { ACMP_MCP_EXTENSION_ID } from '../../src/mcp/acmp-extension.js';
import { connectMcpAcmpBuyer } from '../../src/mcp/buyer.js';
import { countingCapability } from '../acmp/helpers.js';
import { cleanup, onCleanup } from '../helpers/host.js';
import {
  acmpHost,
  ALICE,
  BOB,
  ERAS,
  httpClient,
  invoke,
  Loose,
  mcpUrl,
  newTaskId,
  rpcError,
  stdioClient,
  TOKEN_FLAGS,
} from './helpers.js';

afterEach(cleanup);

const offerRequest = (client: Client, params: Record<string, unknown>) =>
  client.request({ method: 'acmp/offerRequest', params }, Loose);
const accept = (client: Client, params: Record<string, unknown>) =>
  client.request({ method: 'acmp/accept', params }, Loose);

async function negotiatingHost() {
  const counter = countingCapability('count-runs', 5);
  const host = await acmpHost({ flags: TOKEN_FLAGS, capabilities: [counter], negotiation: true });
  return { host, counter };
}

describe.each(ERAS)('Layer 6 over MCP: the server serves what server/discover advertises (%s)', (era) => {
  it('advertises acmp/offerRequest and acmp/accept and answers both; the invoke runs at the agreed price', async () => {
    const { host, counter } = await negotiatingHost();
    const { client } = await httpClient(host, era, ALICE);
    const advertised = client.getServerCapabilities()?.extensions?.[ACMP_MCP_EXTENSION_ID] as {
      accepts: string[];
    };
    expect(advertised.accepts).toEqual(expect.arrayContaining(['acmp/offerRequest', 'acmp/accept']));
    const offer = await offerRequest(client, { capability: 'count-runs', proof_method: 'result-hash' });
    expect(offer).toMatchObject({ capability: 'count-runs', price_cu: 0.001, proof_method: 'result-hash' });
    const offerId = offer.offer_id as string;
    // 2026-07-28 results also carry MCP's own `resultType` and `_meta` (docs/acmp-mcp-binding.md §3).
    expect(await accept(client, { offer_id: offerId, escrow_id: 'esc_mcp' })).toMatchObject({
      offer_id: offerId,
      escrow_id: 'esc_mcp',
      price_cu: 0.001,
    });
    const result = await invoke(client, {
      task_id: newTaskId(),
      capability: 'count-runs',
      input: { type: 'text', data: 'x' },
      offer_id: offerId,
      max_price_cu: 0.001,
      proof_method: 'result-hash',
    });
    expect(result.cost_cu).toBe(0.001);
    expect(counter.runs()).toBe(1);
  });

  it('answers the Layer 6 refusals with their codes: -33002, -32602 with issues, -34001 for another caller, -34003', async () => {
    const { host } = await negotiatingHost();
    const alice = (await httpClient(host, era, ALICE)).client;
    const bob = (await httpClient(host, era, BOB)).client;
    expect(await rpcError(offerRequest(alice, { capability: 'teleport' }))).toMatchObject({
      code: -33002,
      data: { capability: 'teleport' },
    });
    expect(
      await rpcError(offerRequest(alice, { capability: 'count-runs', offer_valid_ms: -1 })),
    ).toMatchObject({
      code: -32602,
      data: { issues: [expect.objectContaining({ path: 'offer_valid_ms' })] },
    });
    expect(await rpcError(accept(alice, {}))).toMatchObject({ code: -32602 });
    const offer = await offerRequest(alice, { capability: 'count-runs' });
    expect(await rpcError(accept(bob, { offer_id: offer.offer_id }))).toMatchObject({ code: -34001 });
    await accept(alice, { offer_id: offer.offer_id, escrow_id: 'esc_1' });
    expect(await rpcError(accept(alice, { offer_id: offer.offer_id, escrow_id: 'esc_2' }))).toMatchObject({
      code: -34003,
    });
  });
});

describe('the MCP buyer negotiates (connectMcpAcmpBuyer)', () => {
  it.each(ERAS)(
    'quotes, accepts and invokes under the agreement; refusals are AcmpErrors (%s)',
    async (era) => {
      const { host, counter } = await negotiatingHost();
      const buyer = await connectMcpAcmpBuyer({
        endpoint: { url: mcpUrl(host) },
        token: ALICE,
        era,
        retries: 0,
      });
      onCleanup(() => buyer.close());
      const offer = await buyer.quote({ capability: 'count-runs', max_price_cu: 0.01 });
      expect(await buyer.accept({ offer_id: offer.offer_id })).toEqual({
        offer_id: offer.offer_id,
        escrow_id: null,
        price_cu: offer.price_cu,
      });
      const result = await buyer.invoke({
        capability: 'count-runs',
        input: { type: 'text', data: 'x' },
        max_price_cu: offer.price_cu,
        offer_id: offer.offer_id,
      });
      expect(result.cost_cu).toBe(offer.price_cu);
      expect(counter.runs()).toBe(1);
      await expect(buyer.accept({ offer_id: `${offer.offer_id}=` })).rejects.toMatchObject({ code: -34001 });
      await expect(buyer.quote({ capability: 'count-runs', max_price_cu: 0.0001 })).rejects.toMatchObject({
        code: -33001,
        data: { min_price_cu: 0.001 },
      });
    },
  );
});

describe('Layer 6 across bindings: one negotiator, one caller identity', () => {
  it('an offer quoted over MCP is accepted over A2A by the same agent, and not by another', async () => {
    const { host } = await negotiatingHost();
    const { client } = await httpClient(host, 'modern', ALICE);
    const offer = await offerRequest(client, { capability: 'count-runs' });
    const overA2a = await createAcmpBuyer({ agentUrl: host.url, token: ALICE, retries: 0 });
    expect(await overA2a.accept({ offer_id: offer.offer_id as string })).toMatchObject({
      offer_id: offer.offer_id,
    });
    const bobOffer = await offerRequest((await httpClient(host, 'modern', BOB)).client, {
      capability: 'count-runs',
    });
    await expect(overA2a.accept({ offer_id: bobOffer.offer_id as string })).rejects.toMatchObject({
      code: -34001,
    });
  });

  it.each(ERAS)('serves acmp/offerRequest and acmp/accept over stdio (%s)', async (era) => {
    const { client } = await stdioClient(era, ['--db', 'memory']);
    const offer = await offerRequest(client, { capability: 'slow-count' });
    expect(offer).toMatchObject({ capability: 'slow-count', price_cu: expect.any(Number) as number });
    expect(await accept(client, { offer_id: offer.offer_id })).toMatchObject({
      offer_id: offer.offer_id,
      escrow_id: null,
    });
  });
});

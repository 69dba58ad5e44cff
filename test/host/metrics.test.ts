import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import type { AcmpCapability, HandlerContext } from '../../src/acmp/provider/provider-types.js';
import { ESCROW_METHOD } from '../../src/acmp/escrow/constants.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { anonymousState } from '../helpers/acp-builders.js';
import { cleanup } from '../helpers/host.js';
import { rawHttp } from '../helpers/sockets.js';
import { acmpHost, countingCapability } from '../acmp/helpers.js';
import { freshSnapshot, postEnvelope, startAcpHost, txId } from '../acpspec/helpers.js';
import { escrowHost } from '../escrow/helpers.js';
import { sample, scrape } from '../helpers/metrics.js';

afterEach(cleanup);

describe('GET /metrics (docs/operations.md "Metrics")', () => {
  it('counts ACMP invokes, CU billed, refusals by code, running tasks and requests after a known workload', async () => {
    const host = await acmpHost({ capabilities: [countingCapability('count-runs', 5)] });
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    for (let i = 0; i < 3; i += 1)
      await buyer.invoke({ capability: 'count-runs', input: { type: 'text', data: 'x' } });
    const refused = await buyer
      .invoke({ capability: 'count-runs', input: { type: 'text', data: 'x' }, max_price_cu: 0.0001 })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: -33001 });

    const text = await scrape(host.url);
    expect(sample(text, 'acmp_invokes_total', { capability: 'count-runs', outcome: 'result' })).toBe(3);
    expect(sample(text, 'acmp_invokes_total', { capability: 'count-runs', outcome: 'refused' })).toBe(1);
    expect(sample(text, 'acmp_errors_total', { code: '-33001' })).toBe(1);
    expect(sample(text, 'acmp_billed_cu_total', { capability: 'count-runs' })).toBeCloseTo(0.003, 9);
    expect(sample(text, 'acmp_running_tasks')).toBe(0);
    expect(sample(text, 'acmp_invoke_duration_seconds_count', { capability: 'count-runs' })).toBe(3);
    expect(
      sample(text, 'a2a_commerce_requests_total', { binding: 'jsonrpc', method: 'POST', outcome: 'ok' }),
    ).toBe(4);
    // No task id, caller or tenant is ever a label.
    expect(text).not.toMatch(/task_id|caller|tenant/);
  });

  it('counts stream chunks and heartbeats of the tasks a host runs', async () => {
    const chunky: AcmpCapability = {
      id: 'three-chunks',
      price: 0.002,
      async *handler(_input, ctx: HandlerContext) {
        for (let i = 0; i < 3; i += 1) {
          await new Promise((resolve) => setTimeout(resolve, 1));
          ctx.heartbeat(i / 3);
          yield { type: 'text', data: `chunk ${i} ` };
        }
      },
    };
    const host = await acmpHost({ capabilities: [chunky], heartbeatIntervalMs: 60_000 });
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    await buyer.invoke({ capability: 'three-chunks', input: { type: 'text', data: 'x' } });

    const text = await scrape(host.url);
    expect(sample(text, 'acmp_stream_chunks_total')).toBe(3);
    expect(sample(text, 'acmp_heartbeats_total')).toBe(3);
    expect(sample(text, 'acmp_owner_lost_reaps_total')).toBe(0);
    expect(sample(text, 'acmp_billed_cu_total', { capability: 'three-chunks' })).toBeCloseTo(0.002, 9);
  });

  it('counts Layer 6 offers and agreements by outcome', async () => {
    const host = await acmpHost({ capabilities: [countingCapability('count-runs', 5)], negotiation: {} });
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    const offer = await buyer.quote({ capability: 'count-runs' });
    await buyer.quote({ capability: 'count-runs' });
    await buyer.accept({ offer_id: offer.offer_id });
    const forged = await buyer.accept({ offer_id: 'not-an-offer' }).catch((e: unknown) => e);
    expect(forged).toMatchObject({ code: -34001 });

    const text = await scrape(host.url);
    expect(sample(text, 'acmp_negotiation_steps_total', { step: 'offer', outcome: 'ok' })).toBe(2);
    expect(sample(text, 'acmp_negotiation_steps_total', { step: 'agreement', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'acmp_negotiation_steps_total', { step: 'agreement', outcome: '-34001' })).toBe(1);
  });

  it('counts ACPspec envelopes by kind and outcome, ACP error codes and the ingest latency', async () => {
    const host = await startAcpHost();
    const accepted = await postEnvelope(host, canonicalJson(freshSnapshot(txId('m'), anonymousState())));
    expect(accepted.status).toBe(200);
    const invalid = await postEnvelope(host, canonicalJson({ kind: 'snapshot', acp_version: '0.1' }));
    expect(invalid.status).toBe(400);

    const text = await scrape(host.url, {}, host.fetch);
    expect(sample(text, 'acp_envelopes_total', { kind: 'snapshot', outcome: 'accepted' })).toBe(1);
    expect(sample(text, 'acp_envelopes_total', { kind: 'snapshot', outcome: 'rejected' })).toBe(1);
    expect(sample(text, 'acp_errors_total', { code: 'ACP_SCHEMA_INVALID' })).toBe(1);
    expect(sample(text, 'acp_ingest_duration_seconds_count')).toBe(2);
    expect(
      sample(text, 'a2a_commerce_requests_total', {
        binding: 'acp-http',
        method: 'POST',
        outcome: 'ok',
      }),
    ).toBe(1);
  });

  it('counts escrow operations by method and outcome; each host has its own registry', async () => {
    const agent = await escrowHost();
    await agent.credit('agent:buyer', '1');
    const buyer = await agent.client('buyer');
    await buyer.call(ESCROW_METHOD.lock, {
      op_ref: 'l1',
      amount_cu: 0.01,
      valid_until_ms: Date.now() + 3_600_000,
    });
    const other = await escrowHost();

    const text = await scrape(agent.host.url);
    expect(sample(text, 'acmp_escrow_operations_total', { method: ESCROW_METHOD.lock, outcome: 'ok' })).toBe(
      1,
    );
    const untouched = await scrape(other.host.url);
    expect(
      sample(untouched, 'acmp_escrow_operations_total', { method: ESCROW_METHOD.lock, outcome: 'ok' }),
    ).toBe(0);
  });

  it('with --metrics-token refuses a scrape without it (401), is exempt from the request rate', async () => {
    const host = await acmpHost({
      flags: { 'metrics-token': 'scrape-secret-0123', 'rate-limit': '1', 'rate-window': '60' },
    });
    const bare = await fetch(`${host.url}/metrics`);
    expect(bare.status).toBe(401);
    expect(await bare.text()).not.toContain('acmp_');
    const wrong = await fetch(`${host.url}/metrics`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    for (let i = 0; i < 3; i += 1)
      await scrape(host.url, { headers: { authorization: 'Bearer scrape-secret-0123' } });
    // The rate is on: a second ordinary request is refused, the scrapes above were never counted.
    expect((await fetch(`${host.url}/.well-known/agent-card.json`)).status).toBe(200);
    expect((await fetch(`${host.url}/.well-known/agent-card.json`)).status).toBe(429);
    await scrape(host.url, { headers: { authorization: 'Bearer scrape-secret-0123' } });
  });

  it('passes the Host check like every route: a foreign Host is refused, its own name is served', async () => {
    const host = await acmpHost();
    const foreign = await rawHttp(`${host.url}/metrics`, { headers: { host: 'attacker.example' } });
    expect(foreign.status).toBe(403);
    const own = await rawHttp(`${host.url}/metrics`, { headers: { host: new URL(host.url).host } });
    expect(own.status).toBe(200);
  });
});

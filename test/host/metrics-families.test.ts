import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { ESCROW_METHOD as M } from '../../src/acmp/escrow/constants.js';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { BUYER, grant, leadState } from '../helpers/acp-builders.js';
import { cleanup } from '../helpers/host.js';
import { sample, scrape, scrapeUntil } from '../helpers/metrics.js';
import { startWebhook } from '../helpers/webhook.js';
import { acmpHost, countingCapability } from '../acmp/helpers.js';
import {
  A,
  call,
  getTask,
  manualClock,
  offerOf,
  onTask,
  openSession,
  send,
  sessionHeaders,
  sessionHost,
} from '../acmp/session-helpers.js';
import { freshDelta, freshSnapshot, startAcpHost, txId } from '../acpspec/helpers.js';
import { escrowHost, escrowWithPushHook } from '../escrow/helpers.js';

afterEach(cleanup);

/** How many commits of one store operation the histogram saw. */
const commits = (text: string, operation: string): number =>
  sample(text, 'a2a_commerce_store_commit_duration_seconds_count', { operation });

describe('the metric families of sessions, escrow funds, consent, push and store commits (docs/operations.md "Metrics")', () => {
  it('counts sessions opened and ended by outcome, and reads the open ones from the store', async () => {
    const clock = manualClock();
    const { host } = await sessionHost({ clock, sessions: { sweepMs: 60_000 } });
    const accepted = await openSession(host);
    const canceled = await openSession(host);
    const expiring = await openSession(host, { offer_valid_ms: 1_000 });
    expect(sample(await scrape(host.url), 'acmp_negotiation_sessions_open')).toBe(3);

    await send(host, onTask(accepted, 'acmp/accept', { offer_id: offerOf(accepted).offer_id }));
    await call(host, 'CancelTask', { id: canceled.id }, sessionHeaders(A));
    await clock.advance(1_001);
    // Read lazily: the session expires on this read (the sweep is far off).
    await getTask(host, expiring.id);
    // A second cancel of a canceled session changes nothing and counts nothing.
    await call(host, 'CancelTask', { id: canceled.id }, sessionHeaders(A));

    const text = await scrape(host.url);
    expect(sample(text, 'acmp_negotiation_sessions_opened_total')).toBe(3);
    expect(sample(text, 'acmp_negotiation_sessions_ended_total', { outcome: 'accepted' })).toBe(1);
    expect(sample(text, 'acmp_negotiation_sessions_ended_total', { outcome: 'canceled' })).toBe(1);
    expect(sample(text, 'acmp_negotiation_sessions_ended_total', { outcome: 'expired' })).toBe(1);
    expect(sample(text, 'acmp_negotiation_sessions_open')).toBe(0);
  });

  it('counts CU locked and released by kind, reads CU held, and times each escrow transaction', async () => {
    // The tick would pay the payouts too (a race with the request's own payout): far off here.
    const agent = await escrowHost({ module: { tickMs: 3_600_000 } });
    await agent.credit('agent:buyer', '1');
    const buyer = await agent.client('buyer');
    const lock = {
      op_ref: 'l1',
      amount_cu: 0.004,
      valid_until_ms: Date.now() + 3_600_000,
      payee_id: 'agent:provider',
    };
    const escrowId = (await buyer.call(M.lock, lock)).escrow_id as string;
    // A replay of the lock (same op_ref and params) moves nothing.
    await buyer.call(M.lock, lock);
    await buyer.call(M.release, {
      op_ref: 'r1',
      escrow_id: escrowId,
      amount_cu: 0.001,
      payee_id: 'agent:provider',
    });
    const held = await scrape(agent.host.url);
    expect(sample(held, 'acmp_escrow_held_cu')).toBeCloseTo(0.003, 9);
    await buyer.call(M.reclaim, { op_ref: 'k1', escrow_id: escrowId });

    const text = await scrape(agent.host.url);
    expect(sample(text, 'acmp_escrow_locked_cu_total')).toBeCloseTo(0.004, 9);
    expect(sample(text, 'acmp_escrow_released_cu_total', { kind: 'release' })).toBeCloseTo(0.001, 9);
    expect(sample(text, 'acmp_escrow_released_cu_total', { kind: 'reclaim' })).toBeCloseTo(0.003, 9);
    expect(sample(text, 'acmp_escrow_held_cu')).toBe(0);
    // Two locks (one replayed), a release, a reclaim, and the two payouts' own transactions.
    expect(commits(text, 'escrow')).toBe(6);
  });

  it('counts consent conflicts by scope and times each ACPspec group commit', async () => {
    const host = await startAcpHost();
    const client = await createAcpClient({ agentUrl: host.url, caCert: host.caCert });
    const lead = freshSnapshot(
      txId('conflict'),
      leadState({ consent: { [BUYER]: { data_sharing: grant(), marketing: grant({ state: 'denied' }) } } }),
    );
    await client.send(lead);
    const raise = [
      {
        op: 'replace',
        path: `/consent/${BUYER}/marketing`,
        value: grant({ captured_at: '2025-06-01T12:09:00Z' }),
      },
    ] as const;
    const attempt = freshDelta(lead, [...raise]);
    await client.send(attempt);
    // A replay is acknowledged again without a commit, so nothing is counted twice.
    await client.send(attempt);

    const text = await scrape(host.url, {}, host.fetch);
    expect(sample(text, 'acp_consent_conflicts_total', { scope: 'marketing' })).toBe(1);
    expect(sample(text, 'acp_consent_conflicts_total', { scope: 'data_sharing' })).toBe(0);
    expect(commits(text, 'acp_ingest')).toBe(2);
  });

  it('times ACMP claims and outcomes: one commit each per invoke on SQLite', async () => {
    const host = await acmpHost({ capabilities: [countingCapability('count-runs', 5)] });
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    for (let i = 0; i < 3; i += 1)
      await buyer.invoke({ capability: 'count-runs', input: { type: 'text', data: 'x' } });

    const text = await scrape(host.url);
    expect(commits(text, 'acmp_claim')).toBe(3);
    expect(commits(text, 'acmp_outcome')).toBe(3);
    expect(commits(text, 'acmp_chunks')).toBe(0);
  });

  it('counts push deliveries by outcome', async () => {
    const hook = await startWebhook((res, i) => res.writeHead(i === 0 ? 200 : 500).end());
    const agent = await escrowHost({ pushAllow: [hook.origin], module: { tickMs: 3_600_000 } });
    await agent.credit('agent:buyer', '1');
    const escrowId = await escrowWithPushHook(agent, hook.url);
    const provider = await agent.client('provider');
    await provider.call(M.claim, {
      op_ref: 'c',
      escrow_id: escrowId,
      amount_cu: 0.002,
      task_id: 't1',
      proof: {},
    });
    await scrapeUntil(agent.host.url, {
      name: 'a2a_commerce_push_deliveries_total',
      labels: { outcome: 'delivered' },
      value: 1,
    });
    await (
      await agent.client('buyer')
    ).call(M.release, {
      op_ref: 'r',
      escrow_id: escrowId,
      amount_cu: 0.002,
      payee_id: 'agent:provider',
    });
    const text = await scrapeUntil(agent.host.url, {
      name: 'a2a_commerce_push_deliveries_total',
      labels: { outcome: 'http_error' },
      value: 1,
    });
    expect(hook.posts).toHaveLength(2);
    expect(sample(text, 'a2a_commerce_push_deliveries_total', { outcome: 'delivered' })).toBe(1);
    expect(sample(text, 'a2a_commerce_push_deliveries_total', { outcome: 'http_error' })).toBe(1);
    expect(sample(text, 'a2a_commerce_push_deliveries_total', { outcome: 'failed' })).toBe(0);
  });
});

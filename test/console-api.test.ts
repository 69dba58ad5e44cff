import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TransactionDetail } from '../src/server/console/acp-reads.js';
import type { EscrowView } from '../src/server/console/money-reads.js';
import type { ConsoleAgreement } from '../src/server/console/negotiation-reads.js';
import type { Overview } from '../src/server/console/overview-reads.js';
import type { ConsoleTaskRow } from '../src/server/console/task-reads.js';
import { cleanup } from './helpers/host.js';
import { freshPgDatabase } from './helpers/pg.js';
import {
  BUYER_SECRET,
  consoleBuyer,
  oneInvoke,
  OPERATOR,
  runConsoleWorkload,
  startConsoleHost,
  type ConsoleHost,
  type ConsoleWorkload,
} from './helpers/console-workload.js';

interface Refusal {
  error: { code: number; status: string; message: string };
}

let host: ConsoleHost;
let workload: ConsoleWorkload;

/** A GET of the read API with the operator credential, another token, or (null) none. */
async function api<T = Record<string, unknown>>(path: string, token: string | null = OPERATOR.secret) {
  const res = await host.fetch(`${host.url}/console/api${path}`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** The backends the cases run on: SQLite always, PostgreSQL when TEST_PG_URL names a server. */
const BACKENDS = [
  { name: 'SQLite', skip: false, db: () => Promise.resolve(undefined) },
  { name: 'PostgreSQL', skip: !process.env.TEST_PG_URL, db: freshPgDatabase },
];

describe.each(BACKENDS)('console read API on $name (docs/console.md)', ({ skip, db }) => {
  beforeAll(async () => {
    if (skip) return;
    const url = await db();
    host = await startConsoleHost(url ? { db: url, migrate: true } : {});
    workload = await runConsoleWorkload(host);
  });
  afterAll(cleanup);
  // `describe.each` has no per-row skipIf: a row without its database skips every case.
  beforeEach((context) => {
    if (skip) context.skip();
  });

  it('counts the workload on the overview', async () => {
    const { status, body } = await api<Overview>('/overview');
    expect(status).toBe(200);
    expect(body.counts).toMatchObject({
      tasks: workload.invokes,
      escrows: workload.escrows,
      agreements: workload.agreements,
      transactions: workload.transactions,
    });
    expect(body.lastHour.invokes).toBe(workload.invokes);
    expect(body.lastHour.perSecond).toBeCloseTo(workload.invokes / 60);
    expect(body.lastHour.errors).toBe(workload.failed);
    expect(body.lastHour.cuBilled).toBeGreaterThan(0);
    expect(Object.values(body.activity?.errorsByCode ?? {})).toEqual([1]);
    expect(body.hosts).toHaveLength(1);
    expect(body.hosts[0]?.alive).toBe(true);
  });

  it('lists tasks filtered by state, capability and caller', async () => {
    expect((await api('/tasks')).body.total).toBe(workload.invokes);
    expect((await api('/tasks?state=failed')).body.total).toBe(workload.failed);
    expect((await api('/tasks?state=completed')).body.total).toBe(workload.invokes - workload.failed);
    expect((await api('/tasks?capability=sentiment-analysis')).body.tasks).toHaveLength(workload.invokes - 1);
    expect((await api('/tasks?capability=slow-count')).body.tasks).toHaveLength(1);
    expect((await api('/tasks?capability=summarize')).body.tasks).toHaveLength(0);
    expect((await api('/tasks?caller=agent:buyer')).body.total).toBe(workload.invokes);
    expect((await api('/tasks?caller=agent:nobody')).body.total).toBe(0);
  });

  it('refuses an unknown state filter with a coded 400', async () => {
    const { status, body } = await api<Refusal>('/tasks?state=bogus');
    expect(status).toBe(400);
    expect(body.error.status).toBe('INVALID_ARGUMENT');
  });

  it('shows one task with its outcome and proof, the payloads masked unless revealed', async () => {
    const id = workload.taskIds[0] ?? '';
    const masked = await api<{ task: ConsoleTaskRow; request: unknown; masked: boolean }>(`/tasks/${id}`);
    expect(masked.status).toBe(200);
    expect(masked.body.task.state).toBe('completed');
    expect(masked.body.masked).toBe(true);
    expect(JSON.stringify(masked.body.request)).not.toContain('Revenue grew');
    const revealed = await api(`/tasks/${id}?reveal=1`);
    expect(JSON.stringify(revealed.body.request)).toContain('Revenue grew');
    expect((await api('/tasks/no-such-task')).status).toBe(404);
  });

  it('shows the ledger with its conservation line and the held escrow', async () => {
    const { body } = await api<EscrowView>('/escrow');
    expect(body.conserved).toBe(true);
    expect(body.escrows).toHaveLength(workload.escrows);
    expect(body.escrows.map((e) => e.heldCu).sort()).toEqual([0.01, 0.01, 0.5]);
    expect(body.totals.creditedCu).toBe(10);
    expect(body.accounts.map((a) => a.account)).toContain('agent:buyer');
  });

  it('shows the pending claim with its window end and the dispute with its deadline', async () => {
    const { body } = await api<EscrowView>('/escrow');
    const byId = (id: string) => body.escrows.find((e) => e.escrowId === id);
    const { claimed, disputed } = workload;
    const claim = byId(claimed.escrowId);
    expect(claim).toMatchObject({ state: 'claimed', payee: 'agent:provider', dispute: null });
    expect(claim?.claim).toMatchObject({ amountCu: claimed.amountCu, taskId: claimed.taskId });
    // The agent's default challenge window (24 h, docs/acmp-escrow.md §1) from when the claim was filed.
    const windowEnd = (claim?.claim?.windowEndsAt ?? 0) - claimed.filedAt;
    expect(windowEnd).toBeGreaterThanOrEqual(24 * 3_600_000 - 1_000);
    expect(windowEnd).toBeLessThanOrEqual(24 * 3_600_000 + 5_000);
    const dispute = byId(disputed.escrowId);
    expect(dispute).toMatchObject({
      state: 'disputed',
      dispute: { reason: disputed.reason, resolved: false },
    });
    expect(dispute?.claim?.taskId).toBe('task_console_disputed');
    // The default resolution deadline (7 days) from when the dispute was raised.
    const deadline = (dispute?.dispute?.deadlineAt ?? 0) - disputed.filedAt;
    expect(deadline).toBeGreaterThanOrEqual(7 * 24 * 3_600_000 - 1_000);
    expect(deadline).toBeLessThanOrEqual(7 * 24 * 3_600_000 + 5_000);
  });

  it('lists the accepted agreement', async () => {
    const { body } = await api<{ agreements: ConsoleAgreement[] }>('/negotiation');
    expect(body.agreements).toHaveLength(workload.agreements);
    expect(body.agreements[0]?.capability).toBe('sentiment-analysis');
  });

  it('masks personal data of a transaction unless revealed', async () => {
    const list = await api('/acp/transactions');
    expect(list.body.total).toBe(1);
    const masked = await api<TransactionDetail>(`/acp/transactions/${workload.transactionId}`);
    expect(masked.status).toBe(200);
    const text = JSON.stringify(masked.body);
    expect(text).not.toContain('ada@example.com');
    expect(text).not.toContain('Ada');
    const party = masked.body.consent.find((c) => c.party === 'p-buyer');
    expect(party?.scopes.contact).toBe('granted');
    expect(party?.conflicts.map((c) => c.scope)).toEqual(['marketing']);
    expect(masked.body.timeline.map((e) => e.kind)).toEqual(['snapshot', 'delta']);
    const revealed = await api(`/acp/transactions/${workload.transactionId}?reveal=1`);
    expect(JSON.stringify(revealed.body)).toContain('ada@example.com');
  });

  it('refuses without the operator credential, with a wrong one, and with a caller token', async () => {
    expect((await api('/overview', null)).status).toBe(401);
    expect((await api('/overview', 'not-the-operator-secret')).status).toBe(401);
    const caller = await api('/overview', BUYER_SECRET);
    expect(caller.status).toBe(403);
    expect(JSON.stringify(caller.body)).not.toContain(BUYER_SECRET);
  });

  it('has no write endpoint', async () => {
    const res = await host.fetch(`${host.url}/console/api/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR.secret}` },
    });
    expect(res.status).toBe(404);
  });

  it('streams a change event after a new invoke', async () => {
    const controller = new AbortController();
    const res = await host.fetch(`${host.url}/console/api/events`, {
      headers: { authorization: `Bearer ${OPERATOR.secret}` },
      signal: controller.signal,
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('event: ready')) text += decoder.decode((await reader.read()).value);
    // The first read of the feed sets its baseline; the invoke after it is a change.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await oneInvoke(await consoleBuyer(host));
    while (!/event: change\ndata: .*"tasks"/.test(text)) text += decoder.decode((await reader.read()).value);
    controller.abort();
    expect(text).toMatch(/event: change/);
  });
});

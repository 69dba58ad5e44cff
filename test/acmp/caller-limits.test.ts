import { afterEach, describe, expect, it } from 'vitest';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { createJsonLogger } from '../../src/shared/logger.js';
import { cleanup, postJson, startTestHost } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { httpClient, invoke, rpcError } from '../mcp/helpers.js';
import { acmpMessage, countingCapability, invokeRoot, jsonRpcUrl, newTaskId, rpc, V1 } from './helpers.js';
import { A, acmpRequest, B, errorOf, SESSION, sessionHost, TOKENS, type Rpc } from './session-helpers.js';

/**
 * Limits per caller identity (docs/acmp-core.md "Limits per caller", docs/acmp-negotiation.md): the
 * tenant a request names is the caller's choice, so no cap may be counted per tenant.
 */
afterEach(cleanup);

const headers = (secret: string): Record<string, string> => ({
  ...V1,
  'A2A-Extensions': ACMP_EXTENSION_URI,
  authorization: `Bearer ${secret}`,
});

/** SendMessage in `tenant` as `secret`, answering as soon as the task exists (A2A §3.2.2). */
async function sendIn(
  host: { url: string },
  tenant: string,
  message: Record<string, unknown>,
  secret = A,
  extra: Record<string, string> = headers(secret),
): Promise<Rpc> {
  const params = { tenant, message, configuration: { returnImmediately: true } };
  return (await postJson(jsonRpcUrl(host), rpc('SendMessage', params), extra)).body as Rpc;
}

/** An invoke of the never-ending `count-runs` capability with a fresh task id. */
function longInvoke(): Record<string, unknown> {
  return acmpMessage(
    invokeRoot({ capability: 'count-runs', input: { type: 'json', data: {} }, max_price_cu: 1 }),
  );
}

/** A host whose `count-runs` runs until cancelled, capped at `maxRunningTasks` per caller. */
async function busyHost(maxRunningTasks: number, flags: Record<string, unknown> = {}, lines: unknown[] = []) {
  const module = acmpModule({
    capabilities: [countingCapability('count-runs', 600_000)],
    heartbeatIntervalMs: 1000,
    maxRunningTasks,
  });
  const logger = createJsonLogger({ write: (line) => lines.push(JSON.parse(line)) });
  return startTestHost({ modules: [module], flags: { token: TOKENS, ...flags }, migrate: true, logger });
}

/** A task started in a tenant. */
interface Started {
  readonly tenant: string;
  readonly reply: Rpc;
}

/** Cancels what a test left running (in its tenant), so closing the host does not wait out its grace. */
async function cancelAll(host: { url: string }, tasks: Started[], secret = A): Promise<void> {
  for (const { tenant, reply } of tasks) {
    const params = { tenant, id: reply.result?.task?.id };
    const cancelled = (await postJson(jsonRpcUrl(host), rpc('CancelTask', params), headers(secret)))
      .body as Rpc;
    expect(cancelled.result?.status?.state).toBe('TASK_STATE_CANCELED');
  }
}

/** Starts `count` long invokes as `secret`, the i-th in tenant `t<i>`. */
async function startMany(host: { url: string }, count: number, secret = A): Promise<Started[]> {
  const started: Started[] = [];
  for (let i = 0; i < count; i++)
    started.push({ tenant: `t${i}`, reply: await sendIn(host, `t${i}`, longInvoke(), secret) });
  return started;
}

const running = (reply: Rpc): boolean => reply.result?.task?.status.state === 'TASK_STATE_WORKING';

describe('open negotiation sessions per caller, across tenants', () => {
  it('stops a caller at max_open_sessions whatever tenant each opening names', async () => {
    const { host } = await sessionHost({ sessions: { maxOpenSessions: 4 } });
    const sessionHeaders = { ...headers(A), 'A2A-Extensions': `${ACMP_EXTENSION_URI}, ${SESSION}` };
    const replies = [];
    for (let i = 0; i < 24; i++) {
      const message = acmpRequest('acmp/offerRequest', { capability: 'count-runs' });
      replies.push(await sendIn(host, `t${i}`, message, A, sessionHeaders));
    }
    const opened = replies.filter((r) => r.result?.task?.status.state === 'TASK_STATE_INPUT_REQUIRED');
    expect(opened).toHaveLength(4);
    for (const refused of replies.filter((r) => !opened.includes(r)))
      expect(errorOf(refused)).toMatchObject({ code: -34001, data: { reason: 'max_open_sessions' } });
    // Another caller is not affected by A's sessions.
    const other = await sendIn(
      host,
      't0',
      acmpRequest('acmp/offerRequest', { capability: 'count-runs' }),
      B,
      {
        ...sessionHeaders,
        authorization: `Bearer ${B}`,
      },
    );
    expect(other.result?.task?.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });
});

describe('running ACMP tasks per caller, across tenants', () => {
  it('refuses new work beyond max_running_tasks with -33099 max_running_tasks; other callers still run', async () => {
    const lines: unknown[] = [];
    const host = await busyHost(3, {}, lines);
    const started = await startMany(host, 6);
    const runningOnes = started.filter((s) => running(s.reply));
    expect(runningOnes).toHaveLength(3);
    for (const { reply } of started.slice(3))
      expect(errorOf(reply)).toMatchObject({
        code: -33099,
        data: { reason: 'max_running_tasks', max_running_tasks: 3 },
      });
    const logged = lines.filter((l) => (l as { event?: string }).event === 'acmp.limit_refused');
    expect(logged).toHaveLength(3);
    for (const line of logged)
      expect(line).toMatchObject({ level: 'warn', limit: 'max_running_tasks', caller: 'agent:a', max: 3 });
    const other = await startMany(host, 1, B);
    expect(running(other[0]!.reply)).toBe(true);
    // A task that ends frees its place.
    await cancelAll(host, runningOnes.slice(0, 1));
    const again = { tenant: 't9', reply: await sendIn(host, 't9', longInvoke()) };
    expect(running(again.reply)).toBe(true);
    await cancelAll(host, [...runningOnes.slice(1), again]);
    await cancelAll(host, other, B);
  });

  it('counts the tasks a caller runs over A2A for its invokes over MCP (-33099 there too)', async () => {
    const host = await busyHost(2);
    const started = await startMany(host, 2);
    expect(started.filter((s) => running(s.reply))).toHaveLength(2);
    const { client } = await httpClient(host, 'modern', A);
    const params = {
      task_id: newTaskId(),
      capability: 'count-runs',
      input: { type: 'json', data: {} },
      max_price_cu: 1,
    };
    expect(await rpcError(invoke(client, params))).toMatchObject({
      code: -33099,
      message: 'Too many running tasks',
      data: { reason: 'max_running_tasks', max_running_tasks: 2 },
    });
    await cancelAll(host, started);
  });

  describe.skipIf(!process.env.TEST_PG_URL)('on PostgreSQL', () => {
    it('holds the cap over two hosts sharing the database', async () => {
      const db = await freshPgDatabase();
      const one = await busyHost(3, { db });
      const two = await busyHost(3, { db });
      const started = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => ({
          tenant: `t${i}`,
          reply: await sendIn(i % 2 === 0 ? one : two, `t${i}`, longInvoke()),
        })),
      );
      expect(started.filter((s) => running(s.reply))).toHaveLength(3);
      expect(started.filter((s) => errorOf(s.reply)?.code === -33099)).toHaveLength(7);
      await cancelAll(
        one,
        started.filter((s) => running(s.reply)),
      );
    });
  });
});

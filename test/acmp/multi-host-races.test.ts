import { afterEach, describe, expect, it } from 'vitest';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { cleanup, postJson, startTestHost } from '../helpers/host.js';
import { providerProcess } from '../helpers/provider-process.js';
import { freshPgDatabase } from '../helpers/pg.js';
import {
  ACTIVATED,
  acmpMessage,
  countingCapability,
  invokeRoot,
  jsonRpcUrl,
  newTaskId,
  replyRoot,
  rpc,
  streamRaw,
  streamRoot,
  tickerCapability,
  type RpcBody,
} from './helpers.js';

afterEach(cleanup);

/**
 * The task model under races between hosts sharing one PostgreSQL (docs/acmp-core.md "The task record",
 * "Claim rules"): each scenario of the task-model issue, looped, with counters that must stay at zero.
 * Hosts are separate servers with their own pools and LISTEN connections; the dead-owner test kills a
 * host running in its own process.
 */
const TRIALS = 100;
const TOKEN_A = 'agent-a-secret-0123456789';
const TOKEN_B = 'agent-b-secret-0123456789';
const TOKENS = [`a=${TOKEN_A}`, `b=${TOKEN_B}`];
const as = (token: string): Record<string, string> => ({ ...ACTIVATED, authorization: `Bearer ${token}` });

async function hosts(count: number, heartbeatIntervalMs = 100) {
  const db = await freshPgDatabase();
  const started = [];
  const counters: ReturnType<typeof countingCapability>[] = [];
  for (let i = 0; i < count; i++) {
    const counter = countingCapability('count-runs', 30);
    counters.push(counter);
    const modules = [
      acmpModule({ capabilities: [counter, tickerCapability('ticker', 10)], heartbeatIntervalMs }),
    ];
    started.push(await startTestHost({ flags: { db, token: TOKENS }, modules, migrate: i === 0 }));
  }
  const executions = (): number => counters.reduce((sum, c) => sum + c.runs(), 0);
  return { db, hosts: started, executions };
}

function send(host: { url: string }, root: ReturnType<typeof invokeRoot>, token: string): Promise<RpcBody> {
  return postJson(jsonRpcUrl(host), rpc('SendMessage', { message: acmpMessage(root) }), as(token)).then(
    (r) => r.body as RpcBody,
  );
}

function getTask(host: { url: string }, id: string, token: string): Promise<RpcBody> {
  return postJson(jsonRpcUrl(host), rpc('GetTask', { id }), as(token)).then((r) => r.body as RpcBody);
}

describe.skipIf(!process.env.TEST_PG_URL)('one record per ACMP task across hosts on one PostgreSQL', () => {
  it(
    `never lets another agent join or replay a task: A and B race for one task_id on two hosts (${TRIALS} trials)`,
    { timeout: 120_000 },
    async () => {
      const {
        hosts: [one, two],
        executions,
      } = await hosts(2);
      let crossAgentJoins = 0;
      let bothRefused = 0;
      for (let trial = 0; trial < TRIALS; trial++) {
        const root = invokeRoot({ capability: 'count-runs', max_price_cu: 1, task_id: newTaskId() });
        const [a, b] = await Promise.all([send(one!, root, TOKEN_A), send(two!, root, TOKEN_B)]);
        const won = [a, b].map((body) => replyRoot(body)?.acmp_result !== undefined);
        if (won[0] && won[1]) crossAgentJoins++;
        if (!won[0] && !won[1]) bothRefused++;
        const loser = won[0] ? { body: b, token: TOKEN_B } : { body: a, token: TOKEN_A };
        expect(
          (replyRoot(loser.body)?.acmp_error as { code: number; data: { detail: string } }).data.detail,
        ).toBe('task_id is already in use');
        // The loser sees no task at all, on either host.
        expect((await getTask(one!, root.params.task_id as string, loser.token)).error?.code).toBe(-32001);
      }
      expect({ crossAgentJoins, bothRefused, executions: executions() }).toEqual({
        crossAgentJoins: 0,
        bothRefused: 0,
        executions: TRIALS,
      });
    },
  );

  it(
    `joins or replays identical duplicates of one agent spread over three hosts, and runs the work once (${TRIALS} trials)`,
    { timeout: 120_000 },
    async () => {
      const { hosts: three, executions } = await hosts(3);
      let refusals = 0;
      let disagreements = 0;
      for (let trial = 0; trial < TRIALS; trial++) {
        const root = invokeRoot({
          capability: 'count-runs',
          input: { type: 'text', data: `t${trial}` },
          max_price_cu: 1,
          task_id: newTaskId(),
        });
        const replies = await Promise.all(
          Array.from({ length: 9 }, (_, i) => send(three[i % 3]!, root, TOKEN_A)),
        );
        const results = replies.map(
          (r) => replyRoot(r)?.acmp_result as { output: { data: { run: number } } } | undefined,
        );
        refusals += results.filter((r) => r === undefined).length;
        if (new Set(results.map((r) => JSON.stringify(r))).size !== 1) disagreements++;
      }
      expect({ refusals, disagreements, executions: executions() }).toEqual({
        refusals: 0,
        disagreements: 0,
        executions: TRIALS,
      });
    },
  );

  it(
    `shows every follower on every host the same canceled state after CancelTask through the host that does not run the task (${TRIALS} trials)`,
    { timeout: 120_000 },
    async () => {
      const {
        hosts: [owner, other],
      } = await hosts(2);
      let disagreements = 0;
      for (let trial = 0; trial < TRIALS; trial++) {
        const root = invokeRoot({
          capability: 'ticker',
          input: { type: 'text', data: 'go' },
          stream: true,
          max_price_cu: 1,
          task_id: newTaskId(),
        });
        const id = root.params.task_id as string;
        const finals: Promise<string | undefined>[] = [];
        const lastState = async (
          stream: AsyncGenerator<Record<string, unknown>>,
        ): Promise<string | undefined> => {
          let state: string | undefined;
          for await (const event of stream) {
            const status = (event.statusUpdate ?? event.task) as { status?: { state: string } } | undefined;
            if (status?.status?.state) state = status.status.state;
            if (streamRoot(event)?.acmp_error) break;
          }
          return state;
        };
        const first = streamRaw(owner!, acmpMessage(root), as(TOKEN_A));
        await first.next();
        finals.push(lastState(first));
        for (const host of [owner!, other!, other!])
          finals.push(lastState(streamRaw(host, acmpMessage(root), as(TOKEN_A))));
        const cancelled = (await postJson(jsonRpcUrl(other!), rpc('CancelTask', { id }), as(TOKEN_A)))
          .body as RpcBody;
        expect(cancelled.result?.status?.state).toBe('TASK_STATE_CANCELED');
        const states = await Promise.all(finals);
        const stored = await Promise.all(
          [owner!, other!].map(async (h) => (await getTask(h, id, TOKEN_A)).result?.status?.state),
        );
        if (new Set([...states, ...stored]).size !== 1 || states[0] !== 'TASK_STATE_CANCELED')
          disagreements++;
      }
      expect(disagreements).toBe(0);
    },
  );
});

describe.skipIf(!process.env.TEST_PG_URL)(
  'a host killed with SIGKILL while it runs a task (Layer 1 §3.6 across hosts)',
  () => {
    it(
      'ends the joiners on the other host with -33003 owner_lost within 3 × the heartbeat interval, finishes the record by itself and never runs the task twice',
      { timeout: 60_000 },
      async () => {
        const heartbeatMs = 500;
        const {
          db,
          hosts: [survivor],
        } = await hosts(1, heartbeatMs);
        const { url, child } = await providerProcess({
          heartbeatMs,
          db,
          env: { A2AC_TOKENS: TOKENS.join(',') },
        });
        const root = invokeRoot({
          capability: 'slow-count',
          input: { type: 'json', data: { n: 10_000 } },
          max_price_cu: 5,
          timeout_ms: 60_000,
          task_id: newTaskId(),
        });
        const owner = streamRaw({ url }, acmpMessage(root), as(TOKEN_A));
        await owner.next();
        const joiner = streamRaw(survivor!, acmpMessage(root), as(TOKEN_A));
        expect((await joiner.next()).value).toMatchObject({
          task: { status: { state: 'TASK_STATE_WORKING' } },
        });
        const killedAt = await new Promise<number>((resolve) => {
          child.once('exit', () => resolve(Date.now()));
          child.kill('SIGKILL');
        });
        let error: { code: number; data: { reason: string } } | undefined;
        for await (const event of joiner) error ??= streamRoot(event)?.acmp_error as typeof error;
        expect(error).toMatchObject({ code: -33003, data: { reason: 'owner_lost' } });
        expect(Date.now() - killedAt).toBeLessThanOrEqual(3 * heartbeatMs + 250);
        // No client re-sends: the record is already terminal, and the survivor never ran the work.
        const task = (await getTask(survivor!, root.params.task_id as string, TOKEN_A)).result;
        expect(task?.status?.state).toBe('TASK_STATE_COMPLETED');
        expect(JSON.stringify(task?.status?.message)).toContain('owner_lost');
      },
    );
  },
);

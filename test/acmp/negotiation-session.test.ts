import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import type { CounterPolicy } from '../../src/acmp/negotiation/session-policy.js';
import { cleanup } from '../helpers/host.js';
import {
  acmpRequest,
  errorOf,
  getTask,
  offerOf,
  onTask,
  openSession,
  rootOf,
  send,
  sessionHeaders,
  sessionHost,
  sessionMeta,
  SESSION,
  A,
  B,
  call,
  taskOf,
  type WireTask,
} from './session-helpers.js';

afterEach(cleanup);

describe('session mode: offers, counters and acceptance in one A2A task (docs/acmp-negotiation.md "Session mode")', () => {
  it('advertises a second card extension under our URN with the session params (design §4.3)', async () => {
    const { host } = await sessionHost();
    const card = (await (
      await fetch(`${host.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })
    ).json()) as {
      capabilities: { extensions: { uri: string; required?: boolean; params: Record<string, unknown> }[] };
    };
    const session = card.capabilities.extensions.find((e) => e.uri === SESSION_EXTENSION_URI);
    expect(SESSION_EXTENSION_URI).toBe('urn:a2a-commerce:acmp:negotiation-session:v0');
    expect(session?.required ?? false).toBe(false);
    expect(session?.params).toEqual({
      max_rounds: 3,
      offer_valid_ms: { default: 5_000, min: 50, max: 60_000 },
      session_ttl_ms: 60_000,
      max_open_sessions: 4,
      counter_terms: ['price_cu', 'challenge_window_ms', 'proof_method'],
    });
  });

  it('N1: offerRequest → INPUT_REQUIRED with the offer (round 1); accept → COMPLETED with the Ack; history has the four messages', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host, { max_price_cu: 0.01 });
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(task.id).toMatch(/^neg_/);
    const offer = offerOf(task);
    expect(offer).toMatchObject({ capability: 'count-runs', price_cu: 0.001 });
    expect(sessionMeta(task)).toMatchObject({ phase: 'offer', round: 1, max_rounds: 3, final: false });
    expect(task.status.message?.extensions).toEqual([SESSION]);
    const done = taskOf(
      await send(host, onTask(task, 'acmp/accept', { offer_id: offer.offer_id, escrow_id: 'esc_n1' })),
    );
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(rootOf(done)?.acmp_result).toEqual({
      offer_id: offer.offer_id,
      escrow_id: 'esc_n1',
      price_cu: 0.001,
    });
    expect(done.history).toHaveLength(4);
    expect(sessionMeta(done)).toMatchObject({
      phase: 'accepted',
      agreement: { terms_hash: sessionMeta(task).offer_hash },
    });
    expect((await getTask(host, task.id)).result).toEqual(done);
  });

  it('N2: a counter is answered with a revised offer (round 2, supersedes); accepting it agrees on the revised price', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    const first = offerOf(task);
    const revised = taskOf(
      await send(host, onTask(task, 'acmp/counterOffer', { offer_id: first.offer_id, price_cu: 0.0009 })),
    );
    expect(revised.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(offerOf(revised).price_cu).toBe(0.0009);
    expect(offerOf(revised).offer_id).not.toBe(first.offer_id);
    expect(sessionMeta(revised)).toMatchObject({ round: 2, supersedes: first.offer_id, final: false });
    const done = taskOf(
      await send(host, onTask(revised, 'acmp/accept', { offer_id: offerOf(revised).offer_id })),
    );
    expect(rootOf(done)?.acmp_result).toMatchObject({ price_cu: 0.0009, escrow_id: null });
  });

  it('N3: a counter the policy declines restates the same offer (counter: declined); accepting it works', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    const offer = offerOf(task);
    const restated = taskOf(
      await send(host, onTask(task, 'acmp/counterOffer', { offer_id: offer.offer_id, price_cu: 0.002 })),
    );
    expect(offerOf(restated)).toEqual(offer);
    expect(sessionMeta(restated)).toMatchObject({ round: 2, counter: 'declined' });
    expect(
      taskOf(await send(host, onTask(task, 'acmp/accept', { offer_id: offer.offer_id }))).status.state,
    ).toBe('TASK_STATE_COMPLETED');
  });

  it('N4: accepting a superseded offer is refused (-34001 superseded); the task keeps the current offer', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    const first = offerOf(task);
    const revised = taskOf(
      await send(host, onTask(task, 'acmp/counterOffer', { offer_id: first.offer_id, price_cu: 0.0008 })),
    );
    const refused = await send(host, onTask(task, 'acmp/accept', { offer_id: first.offer_id }));
    expect(errorOf(refused)).toMatchObject({ code: -34001, data: { reason: 'superseded' } });
    expect(refused.result?.message?.taskId).toBe(task.id);
    const now = (await getTask(host, task.id)).result as WireTask;
    expect(now.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(offerOf(now)).toEqual(offerOf(revised));
  });

  it('N5: a counter beyond max_rounds is refused (-34001 max_rounds); the final offer can still be accepted', async () => {
    const { host } = await sessionHost();
    let task = await openSession(host);
    for (const price of [0.00095, 0.0009])
      task = taskOf(
        await send(
          host,
          onTask(task, 'acmp/counterOffer', { offer_id: offerOf(task).offer_id, price_cu: price }),
        ),
      );
    expect(sessionMeta(task)).toMatchObject({ round: 3, final: true });
    const refused = await send(
      host,
      onTask(task, 'acmp/counterOffer', { offer_id: offerOf(task).offer_id, price_cu: 0.0001 }),
    );
    expect(errorOf(refused)).toMatchObject({ code: -34001, data: { reason: 'max_rounds', max_rounds: 3 } });
    const done = taskOf(await send(host, onTask(task, 'acmp/accept', { offer_id: offerOf(task).offer_id })));
    expect(rootOf(done)?.acmp_result).toMatchObject({ price_cu: 0.0009 });
  });

  it('concedes no further than the floor (80% of the first price) and never below it', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    const revised = taskOf(
      await send(
        host,
        onTask(task, 'acmp/counterOffer', { offer_id: offerOf(task).offer_id, price_cu: 0.0001 }),
      ),
    );
    expect(offerOf(revised).price_cu).toBe(0.0008);
  });

  it("N11: another session's offer is unknown in this one (-34001), and a session offer cannot be accepted flat", async () => {
    const { host } = await sessionHost();
    const one = await openSession(host);
    const two = await openSession(host);
    expect(
      errorOf(await send(host, onTask(two, 'acmp/accept', { offer_id: offerOf(one).offer_id }))),
    ).toMatchObject({ code: -34001, data: { reason: 'not_in_session' } });
    expect(
      errorOf(await send(host, acmpRequest('acmp/accept', { offer_id: offerOf(one).offer_id })))?.code,
    ).toBe(-34001);
    expect((await getTask(host, two.id)).result?.status?.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('N13: while the provider answers a counter (WORKING) a message is refused (-34001 not_your_turn)', async () => {
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const policy: CounterPolicy = async () => {
      await held;
      return { kind: 'revise', changes: { price_cu: 0.0009 } };
    };
    const { host } = await sessionHost({ sessions: { policy } });
    const task = await openSession(host);
    const counter = send(
      host,
      onTask(task, 'acmp/counterOffer', { offer_id: offerOf(task).offer_id, price_cu: 0.0009 }),
    );
    for (
      let i = 0;
      i < 100 && (await getTask(host, task.id)).result?.status?.state !== 'TASK_STATE_WORKING';
      i++
    )
      await new Promise((r) => setTimeout(r, 10));
    const working = (await getTask(host, task.id)).result;
    expect(working?.status?.state).toBe('TASK_STATE_WORKING');
    expect(working?.metadata?.[SESSION]).toMatchObject({ phase: 'quoting' });
    expect(
      errorOf(await send(host, onTask(task, 'acmp/accept', { offer_id: offerOf(task).offer_id }))),
    ).toMatchObject({ code: -34001, data: { reason: 'not_your_turn' } });
    release();
    expect(offerOf(taskOf(await counter)).price_cu).toBe(0.0009);
  });

  it('N14: a resume with another contextId is refused (-32602 context_mismatch); the task is unchanged', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    const refused = await send(
      host,
      onTask(task, 'acmp/accept', { offer_id: offerOf(task).offer_id }, { contextId: 'ctx_other' }),
    );
    expect(errorOf(refused)).toMatchObject({ code: -32602, data: { reason: 'context_mismatch' } });
    expect((await getTask(host, task.id)).result?.history).toHaveLength(2);
    // A2A §3.4.3: the context is inferred from the task when only taskId is given.
    const done = await send(
      host,
      onTask(task, 'acmp/accept', { offer_id: offerOf(task).offer_id }, { contextId: undefined }),
    );
    expect(taskOf(done).status.state).toBe('TASK_STATE_COMPLETED');
  });

  it("N15: an acceptance whose offer_hash is not the standing offer's is refused (-32602 offer_hash_mismatch)", async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    const offer = offerOf(task);
    const wrong = onTask(
      task,
      'acmp/accept',
      { offer_id: offer.offer_id },
      { metadata: { [SESSION]: { offer_hash: 'sha256:00' } }, extensions: [SESSION] },
    );
    expect(errorOf(await send(host, wrong))).toMatchObject({
      code: -32602,
      data: { reason: 'offer_hash_mismatch' },
    });
    const right = onTask(
      task,
      'acmp/accept',
      { offer_id: offer.offer_id },
      { metadata: { [SESSION]: { offer_hash: sessionMeta(task).offer_hash } } },
    );
    expect(taskOf(await send(host, right)).status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('N10: another caller can neither see, resume nor cancel the session (-32001); the task is unchanged', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    expect(
      (await send(host, onTask(task, 'acmp/accept', { offer_id: offerOf(task).offer_id }), B)).error?.code,
    ).toBe(-32001);
    expect((await getTask(host, task.id, B)).error?.code).toBe(-32001);
    expect((await call(host, 'CancelTask', { id: task.id }, sessionHeaders(B))).error?.code).toBe(-32001);
    expect((await call(host, 'ListTasks', {}, sessionHeaders(B))).result?.tasks).toHaveLength(0);
    expect((await getTask(host, task.id, A)).result?.status?.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('a quote failure creates no task: the call answers with an agent message carrying the Layer 1 code', async () => {
    const { host } = await sessionHost();
    const refused = await send(host, acmpRequest('acmp/offerRequest', { capability: 'nope' }));
    expect(refused.result?.task).toBeUndefined();
    expect(errorOf(refused)?.code).toBe(-33002);
    expect((await call(host, 'ListTasks', {}, sessionHeaders(A))).result?.tasks).toHaveLength(0);
  });

  it('without our extension activated an offerRequest stays flat (a direct message, no task)', async () => {
    const { host } = await sessionHost();
    const flat = await call(
      host,
      'SendMessage',
      { message: acmpRequest('acmp/offerRequest', { capability: 'count-runs' }) },
      sessionHeaders(A, 'https://a2agora.org/acmp/v0.1'),
    );
    expect(flat.result?.task).toBeUndefined();
    expect(rootOf(flat)?.acmp_result).toMatchObject({ price_cu: 0.001 });
  });
});

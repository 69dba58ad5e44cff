import { afterEach, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../src/server/host.js';
import { cleanup, tempDir } from '../helpers/host.js';
import {
  acmpRequest,
  call,
  errorOf,
  getTask,
  invokeOn,
  manualClock,
  offerOf,
  onTask,
  openSession,
  rootOf,
  send,
  sessionHeaders,
  sessionHost,
  subscribe,
  A,
  taskOf,
  type WireTask,
} from './session-helpers.js';

afterEach(cleanup);

/** Rows in a table of the host's database. */
async function countOf(host: { database: RunningHost['database'] }, table: string): Promise<number> {
  const row = await host
    .database!.db.selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst();
  return Number((row as { n: number | string }).n);
}

/** Reads a subscription until it ends: the event kinds and the last task status seen. */
async function watchToEnd(
  stream: AsyncGenerator<Record<string, unknown>>,
): Promise<{ kinds: string[]; last: WireTask['status'] | undefined }> {
  const kinds: string[] = [];
  let last: WireTask['status'] | undefined;
  for await (const event of stream) {
    const update = event.statusUpdate as { status: WireTask['status'] } | undefined;
    const task = event.task as WireTask | undefined;
    kinds.push(update ? `update:${update.status.state}` : `task:${task?.status.state ?? '?'}`);
    last = update?.status ?? task?.status;
  }
  return { kinds, last };
}

describe('session lifecycle: expiry, idempotency, cancel, limits (docs/acmp-negotiation.md "State machine")', () => {
  it("N6: past the offer's validity the session reads COMPLETED with -34002; a later accept is -32004; no agreement", async () => {
    const clock = manualClock();
    const { host } = await sessionHost({ clock, sessions: { sweepMs: 60_000 } });
    const task = await openSession(host, { offer_valid_ms: 1_000 });
    await clock.advance(1_001);
    const expired = (await getTask(host, task.id)).result as WireTask;
    expect(expired.status.state).toBe('TASK_STATE_COMPLETED');
    expect(errorOf(expired)).toMatchObject({
      code: -34002,
      data: { offer_id: offerOf(task).offer_id, reason: 'offer_expired' },
    });
    expect(expired.status.timestamp).toBe(new Date(offerOf(task).valid_until_ms).toISOString());
    expect(
      (await send(host, onTask(task, 'acmp/accept', { offer_id: offerOf(task).offer_id }))).error?.code,
    ).toBe(-32004);
    expect(await countOf(host, 'acmp_agreements')).toBe(0);
    const invoke = await send(host, invokeOn([task.id]));
    expect(errorOf(invoke)).toMatchObject({ code: -32602, data: { reason: 'agreement_unknown' } });
  });

  it('F4: an abandoned negotiation is completed -34002 by the sweep at offer expiry and its subscriber is told', async () => {
    const clock = manualClock();
    const { host } = await sessionHost({ clock });
    const task = await openSession(host, { offer_valid_ms: 2_000 });
    const stream = subscribe(host, task.id);
    const first = await stream.next();
    expect((first.value as { task: WireTask }).task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    await clock.advance(2_001);
    const { kinds, last } = await watchToEnd(stream);
    expect(kinds).toEqual(['update:TASK_STATE_COMPLETED']);
    expect(last?.message?.parts[0]?.data).toMatchObject({ acmp_error: { code: -34002 } });
  });

  it('a subscriber follows a counter (WORKING, then INPUT_REQUIRED) and the acceptance (COMPLETED)', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    const stream = subscribe(host, task.id);
    await stream.next();
    const revised = taskOf(
      await send(
        host,
        onTask(task, 'acmp/counterOffer', { offer_id: offerOf(task).offer_id, price_cu: 0.0009 }),
      ),
    );
    await send(host, onTask(task, 'acmp/accept', { offer_id: offerOf(revised).offer_id }));
    const { kinds, last } = await watchToEnd(stream);
    expect(kinds.at(-1)).toBe('update:TASK_STATE_COMPLETED');
    expect(kinds.filter((k) => k === 'update:TASK_STATE_INPUT_REQUIRED').length).toBeLessThanOrEqual(1);
    expect(last?.message?.parts[0]?.data).toMatchObject({ acmp_result: { price_cu: 0.0009 } });
  });

  it('N7/N8/N9: the same accept (messageId and payload) replays the task; another payload is -32602; a new message -32004', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    const accept = onTask(task, 'acmp/accept', { offer_id: offerOf(task).offer_id, escrow_id: 'esc_n7' });
    const done = await send(host, accept);
    expect(await send(host, accept)).toEqual(done);
    expect(await countOf(host, 'acmp_agreements')).toBe(1);
    const other = await send(host, {
      ...accept,
      parts: [
        {
          mediaType: 'application/acmp+json',
          data: {
            acmp_method: 'acmp/accept',
            params: { offer_id: offerOf(task).offer_id, escrow_id: 'esc_other' },
          },
        },
      ],
    });
    expect(errorOf(other)).toMatchObject({ code: -32602, data: { reason: 'message_id_reused' } });
    expect(
      (
        await send(
          host,
          onTask(task, 'acmp/accept', { offer_id: offerOf(task).offer_id, escrow_id: 'esc_n7' }),
        )
      ).error?.code,
    ).toBe(-32004);
    expect((await getTask(host, task.id)).result).toEqual(done.result?.task);
  });

  it('a retry of the opening offerRequest (same messageId) finds the same session; another payload is -32602', async () => {
    const { host } = await sessionHost();
    const open = acmpRequest('acmp/offerRequest', { capability: 'count-runs' });
    const first = taskOf(await send(host, open));
    expect(taskOf(await send(host, open)).id).toBe(first.id);
    const changed = {
      ...open,
      parts: [
        {
          mediaType: 'application/acmp+json',
          data: { acmp_method: 'acmp/offerRequest', params: { capability: 'count-runs', max_price_cu: 1 } },
        },
      ],
    };
    expect(errorOf(await send(host, changed))?.code).toBe(-32602);
  });

  it('N16: CancelTask while INPUT_REQUIRED → CANCELED; an accept after it is -32004; canceling again returns it as it is', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    const canceled = await call(host, 'CancelTask', { id: task.id }, sessionHeaders(A));
    expect(canceled.result?.status?.state).toBe('TASK_STATE_CANCELED');
    expect(
      (await send(host, onTask(task, 'acmp/accept', { offer_id: offerOf(task).offer_id }))).error?.code,
    ).toBe(-32004);
    expect((await call(host, 'CancelTask', { id: task.id }, sessionHeaders(A))).result?.status?.state).toBe(
      'TASK_STATE_CANCELED',
    );
  });

  it('CancelTask of an accepted session is -32002 (not cancelable)', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    await send(host, onTask(task, 'acmp/accept', { offer_id: offerOf(task).offer_id }));
    expect((await call(host, 'CancelTask', { id: task.id }, sessionHeaders(A))).error?.code).toBe(-32002);
  });

  it('N17: open sessions per caller are capped (-34001 max_open_sessions); ended and expired ones do not count', async () => {
    const clock = manualClock();
    const { host } = await sessionHost({ clock, sessions: { maxOpenSessions: 2, sweepMs: 60_000 } });
    const first = await openSession(host, { offer_valid_ms: 1_000 });
    await openSession(host, { offer_valid_ms: 5_000 });
    const refused = await send(host, acmpRequest('acmp/offerRequest', { capability: 'count-runs' }));
    expect(errorOf(refused)).toMatchObject({
      code: -34001,
      data: { reason: 'max_open_sessions', max_open_sessions: 2 },
    });
    await clock.advance(1_001);
    const third = await openSession(host);
    expect(third.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect((await getTask(host, first.id)).result?.status?.state).toBe('TASK_STATE_COMPLETED');
  });

  it("ListTasks shows the caller's sessions, filtered by state (INPUT_REQUIRED, COMPLETED)", async () => {
    const { host } = await sessionHost();
    const open = await openSession(host);
    const done = await openSession(host);
    await send(host, onTask(done, 'acmp/accept', { offer_id: offerOf(done).offer_id }));
    const list = async (status?: string): Promise<string[]> =>
      ((await call(host, 'ListTasks', status ? { status } : {}, sessionHeaders(A))).result?.tasks ?? []).map(
        (t) => t.id,
      );
    expect(new Set(await list())).toEqual(new Set([open.id, done.id]));
    expect(await list('TASK_STATE_INPUT_REQUIRED')).toEqual([open.id]);
    expect(await list('TASK_STATE_COMPLETED')).toEqual([done.id]);
  });

  it('a plain A2A message to a session task is refused (-32004) and changes nothing', async () => {
    const { host } = await sessionHost();
    const task = await openSession(host);
    const plain = {
      messageId: 'm-plain',
      role: 'ROLE_USER',
      taskId: task.id,
      parts: [{ text: 'is this a question for me?' }],
    };
    expect((await call(host, 'SendMessage', { message: plain }, sessionHeaders(A))).error?.code).toBe(-32004);
    expect((await getTask(host, task.id)).result?.history).toHaveLength(2);
  });

  it('a session survives a restart of its host (SQLite): the offer can still be accepted', async () => {
    const dataDir = tempDir();
    const one = await sessionHost({ dataDir });
    const task = await openSession(one.host);
    await one.host.close();
    const two = await sessionHost({ dataDir });
    const done = taskOf(
      await send(two.host, onTask(task, 'acmp/accept', { offer_id: offerOf(task).offer_id })),
    );
    expect(rootOf(done)?.acmp_result).toMatchObject({ price_cu: 0.001 });
  });
});

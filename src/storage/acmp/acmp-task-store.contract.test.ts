import { expect, it } from 'vitest';
import { storeContract, type StoreBackends } from '../../../test/helpers/store-harness.js';
import type { AcmpTaskStore, NewAcmpTask, TaskOutcome, TaskSignal } from '../../acmp/provider/task-store.js';
import { acmpMigrations, KyselyAcmpTaskStore } from './acmp-task-store-kysely.js';
import { MemoryAcmpTaskStore } from '../../acmp/provider/memory-task-store.js';

const backends: StoreBackends<AcmpTaskStore> = {
  memory: () => new MemoryAcmpTaskStore(),
  kysely: (database) => new KyselyAcmpTaskStore(database),
  migrations: [acmpMigrations],
};

const A = { tenant: '', agent: 'agent:a' };
const B = { tenant: '', agent: 'agent:b' };

function task(taskId: string, overrides: Partial<NewAcmpTask> = {}): NewAcmpTask {
  return {
    taskId,
    scope: A,
    paramsHash: 'sha256:p',
    contextId: 'ctx_1',
    request: '{"m":1}',
    hostId: 'host-1',
    createdAt: 1000,
    deadlineAt: 31_000,
    ...overrides,
  };
}

const result: TaskOutcome = {
  kind: 'result',
  result: {
    task_id: 't',
    output: { type: 'text', data: 'ok' },
    output_streamed: false,
    tokens_used: 1,
    cost_cu: 0.001,
  },
};
const cancelled: TaskOutcome = {
  kind: 'error',
  error: { code: -33004, message: 'Task cancelled', data: { task_id: 't' } },
};

let counter = 0;
const id = (): string => `task_contract_${process.pid}_${Date.now()}_${++counter}`;

/** Waits for the first signal of `kind` on a task (PostgreSQL delivers through LISTEN). */
function nextSignal(store: AcmpTaskStore, taskId: string, kind: TaskSignal['kind']): Promise<TaskSignal> {
  return new Promise((resolve) => {
    const stop = store.watch(taskId, (signal) => {
      if (signal.kind !== kind) return;
      stop();
      resolve(signal);
    });
  });
}

storeContract('AcmpTaskStore contract', backends, (t) => {
  it('claims a task id once; a second claim returns the stored record with its scope and params hash', async () => {
    const taskId = id();
    expect(await t.store.claim(task(taskId))).toEqual({ claimed: true });
    const again = await t.store.claim(
      task(taskId, { scope: B, paramsHash: 'sha256:other', hostId: 'host-2' }),
    );
    expect(again.claimed).toBe(false);
    expect(again.claimed === false && again.existing).toMatchObject({
      taskId,
      scope: A,
      paramsHash: 'sha256:p',
      hostId: 'host-1',
      state: 'running',
      contextId: 'ctx_1',
      request: '{"m":1}',
      chunkCount: 0,
    });
  });

  it('lets exactly one of many concurrent claims win', async () => {
    const taskId = id();
    const claims = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.store.claim(task(taskId, { hostId: `host-${i}` }))),
    );
    expect(claims.filter((c) => c.claimed)).toHaveLength(1);
  });

  it('caps the running tasks of a caller in every tenant; finished ones, retries and other callers are not refused', async () => {
    const scope = (tenant: string) => ({ tenant, agent: `agent:busy-${++counter}` });
    const mine = scope('t0');
    const first = id();
    expect(await t.store.claim(task(first, { scope: mine }), 2)).toEqual({ claimed: true });
    expect(await t.store.claim(task(id(), { scope: { ...mine, tenant: 't1' } }), 2)).toEqual({
      claimed: true,
    });
    expect(await t.store.claim(task(id(), { scope: { ...mine, tenant: 't2' } }), 2)).toEqual({
      claimed: false,
      capReached: true,
    });
    // A retry of a stored task id is judged by its record, never by the cap.
    expect(await t.store.claim(task(first, { scope: mine }), 2)).toMatchObject({
      claimed: false,
      existing: { taskId: first },
    });
    expect(await t.store.claim(task(id(), { scope: scope('t2') }), 2)).toEqual({ claimed: true });
    await t.store.finish(first, { outcome: result, end: 'completed', at: 2000 });
    expect(await t.store.claim(task(id(), { scope: { ...mine, tenant: 't3' } }), 2)).toEqual({
      claimed: true,
    });
  });

  it('holds the running cap exactly when one caller claims many tasks at once in many tenants', async () => {
    for (let round = 0; round < 3; round++) {
      const agent = `agent:burst-${++counter}`;
      const claims = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          t.store.claim(task(id(), { scope: { tenant: `t${i}`, agent } }), 3),
        ),
      );
      expect(claims.filter((c) => c.claimed)).toHaveLength(3);
    }
  });

  it('finishes with a compare-and-set: the first outcome stands, the end state is stored', async () => {
    const taskId = id();
    await t.store.claim(task(taskId));
    const first = await t.store.finish(taskId, { outcome: cancelled, end: 'canceled', at: 2000 });
    expect(first).toMatchObject({
      won: true,
      record: { state: 'finished', outcome: cancelled, end: 'canceled', finishedAt: 2000, updatedAt: 2000 },
    });
    const second = await t.store.finish(taskId, {
      outcome: result,
      end: 'completed',
      at: 3000,
      hostId: 'host-1',
    });
    expect(second).toMatchObject({ won: false, record: { outcome: cancelled, end: 'canceled' } });
    expect(await t.store.get(taskId)).toMatchObject({ outcome: cancelled, end: 'canceled' });
    expect(
      await t.store.finish('task_missing_' + taskId, { outcome: result, end: 'completed', at: 1 }),
    ).toBeUndefined();
  });

  it('refuses an owner-conditioned finish from another host', async () => {
    const taskId = id();
    await t.store.claim(task(taskId));
    expect(
      (await t.store.finish(taskId, { outcome: result, end: 'completed', at: 2000, hostId: 'host-2' }))?.won,
    ).toBe(false);
    expect((await t.store.get(taskId))?.state).toBe('running');
  });

  it('appends chunks in order only for the owning host of a running task', async () => {
    const taskId = id();
    await t.store.claim(task(taskId));
    const c = (n: number) => ({ type: 'text', data: `c${n}` });
    expect(await t.store.appendChunks(taskId, { hostId: 'host-1', from: 0, chunks: [c(0), c(1)] })).toBe(
      true,
    );
    expect(await t.store.appendChunks(taskId, { hostId: 'host-1', from: 1, chunks: [c(9)] })).toBe(false);
    expect(await t.store.appendChunks(taskId, { hostId: 'host-2', from: 2, chunks: [c(2)] })).toBe(false);
    expect(await t.store.appendChunks(taskId, { hostId: 'host-1', from: 2, chunks: [c(2)] })).toBe(true);
    expect(await t.store.chunks(taskId, 0)).toEqual([c(0), c(1), c(2)]);
    expect(await t.store.chunks(taskId, 2)).toEqual([c(2)]);
    expect((await t.store.get(taskId))?.chunkCount).toBe(3);
    await t.store.finish(taskId, { outcome: result, end: 'completed', at: 2000 });
    expect(await t.store.appendChunks(taskId, { hostId: 'host-1', from: 3, chunks: [c(3)] })).toBe(false);
  });

  it('signals chunks, heartbeats and the end to watchers', async () => {
    const taskId = id();
    await t.store.claim(task(taskId));
    const chunks = nextSignal(t.store, taskId, 'chunks');
    await t.store.appendChunks(taskId, { hostId: 'host-1', from: 0, chunks: [{ type: 'text', data: 'x' }] });
    expect(await chunks).toEqual({ kind: 'chunks', taskId, count: 1 });
    const beat = nextSignal(t.store, taskId, 'heartbeat');
    t.store.heartbeat(taskId, 0.5, 'half');
    expect(await beat).toEqual({ kind: 'heartbeat', taskId, progress: 0.5, detail: 'half' });
    const finished = nextSignal(t.store, taskId, 'finished');
    await t.store.finish(taskId, { outcome: result, end: 'completed', at: 2000 });
    expect(await finished).toEqual({ kind: 'finished', taskId });
  });

  it('lists one scope newest first, filtered and paged by cursor', async () => {
    const agent = { tenant: 't-' + id(), agent: 'agent:lister' };
    const ids = [id(), id(), id()];
    for (const [i, taskId] of ids.entries())
      await t.store.claim(
        task(taskId, { scope: agent, createdAt: 1000 + i, contextId: i === 0 ? 'ctx_x' : 'ctx_y' }),
      );
    await t.store.claim(task(id(), { scope: { ...agent, agent: 'agent:other' } }));
    await t.store.finish(ids[0]!, { outcome: result, end: 'completed', at: 5000 });
    const all = await t.store.list(agent, { limit: 10 });
    expect(all.total).toBe(3);
    expect(all.records.map((r) => r.taskId)).toEqual([ids[0], ids[2], ids[1]]);
    const page = await t.store.list(agent, { limit: 1, after: { updatedAt: 5000, taskId: ids[0]! } });
    expect(page.records.map((r) => r.taskId)).toEqual([ids[2]]);
    expect((await t.store.list(agent, { limit: 10, state: 'running' })).records).toHaveLength(2);
    expect(
      (await t.store.list(agent, { limit: 10, state: 'completed' })).records.map((r) => r.taskId),
    ).toEqual([ids[0]]);
    expect((await t.store.list(agent, { limit: 10, state: 'canceled' })).total).toBe(0);
    expect((await t.store.list(agent, { limit: 10, contextId: 'ctx_y' })).total).toBe(2);
    expect(
      (await t.store.list(agent, { limit: 10, updatedAfter: 1001 })).records.map((r) => r.taskId),
    ).toEqual([ids[0], ids[2]]);
  });

  it('reports running tasks of silent or unknown hosts as orphans, and lost tasks of a host', async () => {
    const alive = 'host-alive-' + id();
    const silent = 'host-silent-' + id();
    const [a, b, c, d] = [id(), id(), id(), id()];
    await t.store.beat({ hostId: alive, at: 10_000 });
    await t.store.beat({ hostId: silent, at: 1_000 });
    await t.store.claim(task(a, { hostId: alive, createdAt: 500 }));
    await t.store.claim(task(b, { hostId: silent, createdAt: 500 }));
    await t.store.claim(task(c, { hostId: 'host-never-beat-' + id(), createdAt: 500 }));
    await t.store.claim(task(d, { hostId: 'host-new-' + id(), createdAt: 9_500 }));
    const orphans = await t.store.orphans(5_000, 1000);
    expect(orphans).toEqual(expect.arrayContaining([b, c]));
    expect(orphans).not.toContain(a);
    expect(orphans).not.toContain(d);
    await t.store.finish(a, { outcome: cancelled, end: 'canceled', at: 11_000 });
    expect(await t.store.lost(alive, [a, 'task_unknown'])).toEqual([a, 'task_unknown']);
    await t.store.retire(silent);
    expect(await t.store.orphans(5_000, 1000)).toEqual(expect.arrayContaining([b, c]));
  });
});

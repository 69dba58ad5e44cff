import { expect, it } from 'vitest';
import { storeContract, type StoreBackends } from '../../../test/helpers/store-harness.js';
import type { AcmpTaskStore, NewAcmpTask, TaskOutcome } from '../../acmp/provider/task-store.js';
import { NO_METRICS, type StoreOperation } from '../../shared/metrics.js';
import { acmpMigrations, KyselyAcmpTaskStore } from './acmp-task-store-kysely.js';
import { MemoryAcmpTaskStore } from '../../acmp/provider/memory-task-store.js';

/** A store and the commits it observed (one observation per database transaction). */
interface Observed {
  readonly store: AcmpTaskStore;
  readonly commits: StoreOperation[] | undefined;
}

const backends: StoreBackends<Observed> = {
  memory: () => ({ store: new MemoryAcmpTaskStore(), commits: undefined }),
  kysely: (database) => {
    const commits: StoreOperation[] = [];
    const metrics = {
      ...NO_METRICS,
      storeCommit: (operation: StoreOperation) => void commits.push(operation),
    };
    const store = new KyselyAcmpTaskStore(database, { metrics });
    return Object.assign(Object.create(null) as object, {
      store,
      commits,
      open: () => store.open(),
      close: () => store.close(),
    });
  },
  migrations: [acmpMigrations],
};

const task = (taskId: string, agent = 'agent:a'): NewAcmpTask => ({
  taskId,
  scope: { tenant: '', agent },
  paramsHash: 'sha256:p',
  contextId: 'ctx_1',
  request: '{"m":1}',
  hostId: 'host-1',
  createdAt: 1000,
  deadlineAt: 31_000,
});

const result = (taskId: string): TaskOutcome => ({
  kind: 'result',
  result: {
    task_id: taskId,
    output: { type: 'text', data: 'ok' },
    output_streamed: false,
    tokens_used: 1,
    cost_cu: 0,
  },
});

const ids = Array.from({ length: 16 }, (_, i) => `task_${i}`);

storeContract('ACMP claims and outcomes, group commit', backends, (t) => {
  it('writes concurrent claims together, each acknowledged with its own result', async () => {
    const { store, commits } = t.store;
    const claims = await Promise.all([...ids, 'task_0'].map((id) => store.claim(task(id))));
    expect(claims.filter((c) => c.claimed)).toHaveLength(16);
    expect(claims[16]).toMatchObject({ claimed: false, existing: { taskId: 'task_0' } });
    for (const id of ids) expect((await store.get(id))?.state).toBe('running');
    if (commits) expect(commits.filter((c) => c === 'acmp_claim').length).toBeLessThan(8);
  });

  it('writes concurrent outcomes together; a second finish of a task loses', async () => {
    const { store, commits } = t.store;
    for (const id of ids) await store.claim(task(id));
    const finish = (id: string) => store.finish(id, { outcome: result(id), end: 'completed', at: 2000 });
    const finished = await Promise.all(ids.map(finish));
    expect(finished.every((f) => f?.won === true && f.record.state === 'finished')).toBe(true);
    expect((await finish('task_3'))?.won).toBe(false);
    if (commits) expect(commits.filter((c) => c === 'acmp_outcome').length).toBeLessThan(9);
  });

  it('holds the running cap exactly inside one batch of claims', async () => {
    const { store } = t.store;
    const claims = await Promise.all(ids.map((id) => store.claim(task(id), 5)));
    expect(claims.filter((c) => c.claimed)).toHaveLength(5);
    expect(claims.filter((c) => !c.claimed && c.capReached === true)).toHaveLength(11);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AcmpTaskStore, NewAcmpTask, TaskOutcome } from '../acmp/task-store.js';
import { openDatabase, type Database } from './database.js';
import { migrateSets } from './migrations.js';
import { acmpMigrations, KyselyAcmpTaskStore } from './acmp-task-store-kysely.js';
import { MemoryAcmpTaskStore } from './acmp-task-store-memory.js';

interface Harness {
  store(): AcmpTaskStore;
  setup(): Promise<void>;
  teardown(): Promise<void>;
}

function memoryHarness(): Harness {
  return { store: () => new MemoryAcmpTaskStore(), setup: () => Promise.resolve(), teardown: () => Promise.resolve() };
}

function sqliteHarness(): Harness {
  let dir = '';
  let database: Database | undefined;
  return {
    store: () => new KyselyAcmpTaskStore(database!.db),
    async setup() {
      dir = mkdtempSync(join(tmpdir(), 'acmp-store-'));
      database = openDatabase({ url: `sqlite:${join(dir, 'db.sqlite')}`, dataDir: dir });
      await migrateSets(database, [acmpMigrations]);
    },
    async teardown() {
      await database?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh schema per run, so parallel runs never share a table. */
function postgresHarness(baseUrl: string): Harness {
  const schema = `acmp_test_${process.pid}_${Date.now()}`;
  let admin: Database | undefined;
  let database: Database | undefined;
  return {
    store: () => new KyselyAcmpTaskStore(database!.db),
    async setup() {
      admin = openDatabase({ url: baseUrl, dataDir: tmpdir() });
      await admin.db.schema.createSchema(schema).execute();
      const url = new URL(baseUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      database = openDatabase({ url: url.toString(), dataDir: tmpdir() });
      await migrateSets(database, [acmpMigrations]);
    },
    async teardown() {
      await database?.close();
      await admin?.db.schema.dropSchema(schema).ifExists().cascade().execute();
      await admin?.close();
    },
  };
}

const harnesses: [string, Harness | undefined][] = [
  ['memory', memoryHarness()],
  ['sqlite', sqliteHarness()],
  ['postgres', process.env.TEST_PG_URL ? postgresHarness(process.env.TEST_PG_URL) : undefined],
];

let seq = 0;
function newTask(overrides: Partial<NewAcmpTask> = {}): NewAcmpTask {
  seq += 1;
  return { taskId: `task_${Date.now()}_${seq}`, paramsHash: 'sha256:p', ownerId: 'host-a', createdAt: 1000, deadlineAt: 31_000, ...overrides };
}

const resultOutcome: TaskOutcome = {
  kind: 'result',
  result: { task_id: 't', output: { type: 'text', data: 'ab' }, output_streamed: false, tokens_used: 1, cost_cu: 0.001 },
  chunks: [
    { type: 'text', data: 'a' },
    { type: 'text', data: 'b' },
  ],
};

for (const [name, harness] of harnesses) {
  describe.skipIf(harness === undefined)(`AcmpTaskStore contract (${name})`, () => {
    let store: AcmpTaskStore;
    beforeAll(async () => harness!.setup());
    afterAll(async () => harness!.teardown());
    beforeEach(() => {
      store = harness!.store();
    });

    it('claims a new task once and returns the existing record afterwards', async () => {
      const task = newTask();
      expect(await store.claim(task)).toEqual({ claimed: true });
      const second = await store.claim({ ...task, ownerId: 'host-b' });
      expect(second.claimed).toBe(false);
      if (!second.claimed) {
        expect(second.existing).toMatchObject({ taskId: task.taskId, ownerId: 'host-a', state: 'running', aliveAt: 1000 });
        expect(second.existing.deadlineAt).toBe(31_000);
        expect(second.existing.cancelRequested).toBe(false);
      }
    });

    it('lets exactly one of many concurrent claims win', async () => {
      const task = newTask();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claim({ ...task, ownerId: `h${i}` })));
      expect(results.filter((r) => r.claimed)).toHaveLength(1);
    });

    it('returns undefined for an unknown task', async () => {
      expect(await store.get('task_missing')).toBeUndefined();
    });

    it('refreshes alive_at only for the owner of a running task', async () => {
      const task = newTask();
      await store.claim(task);
      expect(await store.touch(task.taskId, 'host-a', 2000)).toEqual({ cancelRequested: false });
      expect(await store.touch(task.taskId, 'host-b', 3000)).toBeUndefined();
      expect((await store.get(task.taskId))?.aliveAt).toBe(2000);
    });

    it('reports a cancel request through touch', async () => {
      const task = newTask();
      await store.claim(task);
      expect(await store.requestCancel(task.taskId)).toBe(true);
      expect(await store.touch(task.taskId, 'host-a', 2000)).toEqual({ cancelRequested: true });
    });

    it('finishes a running task once and stores the outcome with its chunks', async () => {
      const task = newTask();
      await store.claim(task);
      expect(await store.finish(task.taskId, resultOutcome, 5000, { ownerId: 'host-a' })).toBe(true);
      expect(await store.finish(task.taskId, { kind: 'error', error: { code: -33003, message: 'x' } }, 6000)).toBe(false);
      const record = await store.get(task.taskId);
      expect(record).toMatchObject({ state: 'finished', finishedAt: 5000, outcome: resultOutcome });
      expect(await store.touch(task.taskId, 'host-a', 7000)).toBeUndefined();
      expect(await store.requestCancel(task.taskId)).toBe(false);
    });

    it('refuses a finish by a process that does not own the task', async () => {
      const task = newTask();
      await store.claim(task);
      expect(await store.finish(task.taskId, resultOutcome, 5000, { ownerId: 'host-b' })).toBe(false);
    });

    it('lets a joiner finish only when alive_at is older than its bound (compare-and-set)', async () => {
      const task = newTask();
      await store.claim(task);
      await store.touch(task.taskId, 'host-a', 4000);
      const timeout: TaskOutcome = { kind: 'error', error: { code: -33003, message: 'Task timed out', data: { task_id: task.taskId } } };
      expect(await store.finish(task.taskId, timeout, 5000, { aliveBefore: 4000 })).toBe(false);
      expect(await store.finish(task.taskId, timeout, 5000, { aliveBefore: 4001 })).toBe(true);
      expect((await store.get(task.taskId))?.outcome).toEqual(timeout);
    });
  });
}

import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { silentLogger } from '../../shared/logger.js';
import { NO_METRICS } from '../../shared/metrics.js';
import { HostLiveness } from './host-liveness.js';
import { MemoryAcmpTaskStore } from './memory-task-store.js';

const BEAT_MS = 100;
const WINDOW_MS = 300;

/** A task of `hostId`, running since `at`. */
async function runningTask(store: MemoryAcmpTaskStore, taskId: string, hostId: string, at: number) {
  const claimed = await store.claim({
    taskId,
    scope: { tenant: '', agent: 'agent:buyer' },
    paramsHash: 'h',
    contextId: 'c',
    request: '{}',
    hostId,
    createdAt: at,
    deadlineAt: at + 60_000,
  });
  expect(claimed).toEqual({ claimed: true });
}

function liveness(store: MemoryAcmpTaskStore, clock: ManualClock, hostId: string, running: string[] = []) {
  const lost: string[] = [];
  const host = new HostLiveness({
    store,
    hostId,
    clock,
    logger: silentLogger,
    metrics: NO_METRICS,
    beatMs: BEAT_MS,
    windowMs: WINDOW_MS,
    running: () => running,
    onLost: (taskId) => lost.push(taskId),
  });
  return { host, lost };
}

describe('HostLiveness (Layer 1 §3.6 across hosts), on manual time', () => {
  it("reaps a silent host's running task as owner_lost once the window has passed, not before", async () => {
    const clock = new ManualClock();
    const store = new MemoryAcmpTaskStore();
    const a = liveness(store, clock, 'host-a', ['task_a']);
    const b = liveness(store, clock, 'host-b');
    await a.host.start();
    await b.host.start();
    await runningTask(store, 'task_a', 'host-a', clock.now());
    // Host A beats: its task stays running however long it runs.
    await clock.advance(10 * WINDOW_MS);
    expect((await store.get('task_a'))?.state).toBe('running');
    // Host A stops beating (a killed process): it is silent from its last beat on.
    const lastBeat = clock.now();
    await a.host.stop().catch(() => undefined);
    await store.beat({ hostId: 'host-a', at: lastBeat });
    await clock.advance(WINDOW_MS);
    expect((await store.get('task_a'))?.state).toBe('running');
    await clock.advance(BEAT_MS);
    const reaped = await store.get('task_a');
    expect(reaped?.state).toBe('finished');
    expect(reaped?.outcome).toMatchObject({
      kind: 'error',
      error: { code: -33003, data: { task_id: 'task_a', reason: 'owner_lost' } },
    });
    await b.host.stop();
    expect(clock.pending).toBe(0);
  });

  it('tells its host of a running task finished elsewhere (a lost signal)', async () => {
    const clock = new ManualClock();
    const store = new MemoryAcmpTaskStore();
    const a = liveness(store, clock, 'host-a', ['task_a']);
    await a.host.start();
    await runningTask(store, 'task_a', 'host-a', clock.now());
    await store.finish('task_a', {
      outcome: {
        kind: 'result',
        result: { task_id: 'task_a', output: { type: 'text', data: 'x' }, tokens_used: 0, cost_cu: 0 },
      },
      end: 'completed',
      at: clock.now(),
    });
    expect(a.lost).toEqual([]);
    await clock.advance(BEAT_MS);
    expect(a.lost).toEqual(['task_a']);
    await a.host.stop();
  });
});

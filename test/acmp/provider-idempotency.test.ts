import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Database } from '../../src/storage/sql/database.js';
import { migrateSets } from '../../src/storage/sql/migrations.js';
import { acmpMigrations, KyselyAcmpTaskStore } from '../../src/storage/acmp/acmp-task-store-kysely.js';
import { MemoryAcmpTaskStore } from '../../src/acmp/provider/memory-task-store.js';
import { paramsHash } from '../../src/acmp/provider/provider-checks.js';
import { createAcmpProvider, LOCAL_SCOPE } from '../../src/acmp/provider/provider.js';
import type { ProviderEvent } from '../../src/acmp/provider/provider.js';
import { buildInvokeParams, collect, probeCapability } from '../helpers/acmp-testing.js';

const chunks = [
  { type: 'text', data: 'a' },
  { type: 'text', data: 'b' },
];
const kinds = (events: ProviderEvent[]): string[] => events.map((e) => e.kind);

afterEach(() => {
  vi.useRealTimers();
});

describe('idempotency (Layer 1 §3.1.1)', () => {
  it('runs 200 concurrent duplicates exactly once and answers all with the same result', async () => {
    const echo = probeCapability('echo');
    const provider = createAcmpProvider({ capabilities: [echo] });
    const params = buildInvokeParams();
    const all = Array.from({ length: 200 }, () => collect(provider.invoke(params, { canStream: true })));
    await vi.waitFor(() => expect(echo.runs).toBe(1));
    echo.release();
    const results = await Promise.all(all);
    expect(echo.runs).toBe(1);
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(results[0]?.[0]?.kind).toBe('result');
  });

  it('replays a finished task without running it again', async () => {
    const echo = probeCapability('echo', { gated: false });
    const provider = createAcmpProvider({ capabilities: [echo] });
    const params = buildInvokeParams();
    const first = await collect(provider.invoke(params, { canStream: true }));
    const second = await collect(provider.invoke(params, { canStream: true }));
    expect(second).toEqual(first);
    expect(echo.runs).toBe(1);
  });

  it('replays a stored error outcome', async () => {
    vi.useFakeTimers();
    const echo = probeCapability('echo');
    const provider = createAcmpProvider({ capabilities: [echo] });
    const params = buildInvokeParams({ timeout_ms: 100 });
    const first = collect(provider.invoke(params, { canStream: true }));
    await vi.advanceTimersByTimeAsync(100);
    const again = await collect(provider.invoke(params, { canStream: true }));
    expect(again).toEqual(await first);
    expect(again[0]).toMatchObject({ kind: 'error', error: { code: -33003 } });
    expect(echo.runs).toBe(1);
  });

  it('replays stored chunks to a streaming retry and the assembled output to a plain one', async () => {
    const probe = probeCapability('echo', { chunks, gated: false });
    const provider = createAcmpProvider({ capabilities: [probe] });
    const params = buildInvokeParams({ stream: true });
    const first = await collect(provider.invoke(params, { canStream: true }));
    expect(await collect(provider.invoke(params, { canStream: true }))).toEqual(first);
    const plain = await collect(provider.invoke({ ...params, stream: false }, { canStream: true }));
    expect(plain).toMatchObject([
      { kind: 'result', result: { output: { type: 'text', data: 'ab' }, output_streamed: false } },
    ]);
    expect(probe.runs).toBe(1);
  });

  it('lets an in-flight duplicate join: chunks so far, then live events', async () => {
    const probe = probeCapability('echo', { chunks });
    const provider = createAcmpProvider({ capabilities: [probe] });
    const params = buildInvokeParams({ stream: true });
    const first = collect(provider.invoke(params, { canStream: true }));
    probe.release();
    await vi.waitFor(async () =>
      expect((await provider.outcome(params.task_id)) ?? 'running').toBe('running'),
    );
    const joined = collect(provider.invoke(params, { canStream: true }));
    probe.release();
    const [a, b] = await Promise.all([first, joined]);
    expect(b).toEqual(a);
    expect(kinds(a)).toEqual(['chunk', 'chunk', 'result']);
    expect(probe.runs).toBe(1);
  });

  it('rejects a task_id reused with different params with -32602 and runs nothing', async () => {
    const echo = probeCapability('echo', { gated: false });
    const provider = createAcmpProvider({ capabilities: [echo] });
    const params = buildInvokeParams();
    await collect(provider.invoke(params, { canStream: true }));
    const other = await collect(
      provider.invoke({ ...params, input: { type: 'text', data: 'other' } }, { canStream: true }),
    );
    expect(other).toMatchObject([
      { kind: 'error', error: { code: -32602, data: { task_id: params.task_id } } },
    ]);
    expect(echo.runs).toBe(1);
  });

  it('does not store pre-execution rejections, so a retry is judged again', async () => {
    const provider = createAcmpProvider({
      capabilities: [probeCapability('echo', { price: 0.01, gated: false })],
    });
    const params = buildInvokeParams({ max_price_cu: 0.001 });
    await collect(provider.invoke(params, { canStream: true }));
    expect(await provider.outcome(params.task_id)).toBeUndefined();
  });
});

describe('idempotency across processes (Layer 1 §3.1.1, §3.6)', () => {
  it('makes a second host wait for the owner and replay its result', async () => {
    const store = new MemoryAcmpTaskStore();
    const echoA = probeCapability('echo');
    const echoB = probeCapability('echo');
    const hostA = createAcmpProvider({ capabilities: [echoA], store, fallbackReadMs: 10 });
    const hostB = createAcmpProvider({ capabilities: [echoB], store, fallbackReadMs: 10 });
    const params = buildInvokeParams();
    const onA = collect(hostA.invoke(params, { canStream: true }));
    await vi.waitFor(() => expect(echoA.runs).toBe(1));
    const onB = collect(hostB.invoke(params, { canStream: true }));
    echoA.release();
    expect(await onB).toEqual(await onA);
    expect(echoB.runs).toBe(0);
  });

  it('finishes a task whose host stopped beating as -33003 owner_lost, within 3 × the heartbeat interval', async () => {
    vi.useFakeTimers();
    const store = new MemoryAcmpTaskStore();
    const now = Date.now();
    const params = buildInvokeParams();
    const host = createAcmpProvider({
      capabilities: [probeCapability('echo')],
      store,
      heartbeatIntervalMs: 1000,
      fallbackReadMs: 100,
    });
    await store.claim({
      taskId: params.task_id,
      scope: LOCAL_SCOPE,
      paramsHash: paramsHash(params),
      contextId: '',
      request: '',
      hostId: 'dead-host',
      createdAt: now,
      deadlineAt: now + 30_000,
    });
    const pending = collect(host.invoke(params, { canStream: true }));
    await vi.advanceTimersByTimeAsync(3000);
    expect(await pending).toMatchObject([
      { kind: 'error', error: { code: -33003, data: { reason: 'owner_lost' } } },
    ]);
    expect(await host.outcome(params.task_id)).toMatchObject({ kind: 'error', error: { code: -33003 } });
  });

  it('routes a cancel through the store to the owning host', async () => {
    const store = new MemoryAcmpTaskStore();
    const echoA = probeCapability('echo');
    const hostA = createAcmpProvider({ capabilities: [echoA], store, heartbeatIntervalMs: 20 });
    const hostB = createAcmpProvider({ capabilities: [], store });
    const params = buildInvokeParams();
    const onA = collect(hostA.invoke(params, { canStream: true }));
    await vi.waitFor(() => expect(echoA.runs).toBe(1));
    expect(await hostB.cancel({ task_id: params.task_id })).toEqual({ found: true });
    expect((await onA).at(-1)).toMatchObject({ kind: 'error', error: { code: -33004 } });
    expect(echoA.signals[0]?.aborted).toBe(true);
  });
});

describe('idempotency after a restart (Layer 1 §3.1.1, SQLite)', () => {
  let dir = '';
  let databases: Database[] = [];
  const open = async (): Promise<KyselyAcmpTaskStore> => {
    const database = openDatabase({ url: `sqlite:${join(dir, 'acmp.sqlite')}`, dataDir: dir });
    databases.push(database);
    await migrateSets(database, [acmpMigrations]);
    return new KyselyAcmpTaskStore(database);
  };
  afterEach(async () => {
    for (const d of databases) await d.close();
    databases = [];
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers a duplicate with the stored result from a new provider on the same file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'acmp-restart-'));
    const before = probeCapability('echo', { chunks, gated: false });
    const first = createAcmpProvider({ capabilities: [before], store: await open() });
    const params = buildInvokeParams({ stream: true, proof_method: 'result-hash' });
    const original = await collect(first.invoke(params, { canStream: true }));
    await first.close();
    await databases.pop()!.close();

    const after = probeCapability('echo', { chunks, gated: false });
    const second = createAcmpProvider({ capabilities: [after], store: await open() });
    expect(await collect(second.invoke(params, { canStream: true }))).toEqual(original);
    expect(after.runs).toBe(0);
  });
});

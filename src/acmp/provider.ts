import { AsyncQueue } from '../shared/async.js';
import { systemClock } from '../shared/clock.js';
import { systemIds } from '../shared/ids.js';
import { errorFields, silentLogger } from '../shared/logger.js';
import { MemoryAcmpTaskStore } from './memory-task-store.js';
import { ACMP_METHOD, ACMP_VERSION } from './constants.js';
import { ACMP_CODE, AcmpError, toAcmpErrorObject } from './errors.js';
import { parseCancelParams, parseInvokeParams, resolveInvoke, type CapabilityObject, type InvokeParams } from './messages.js';
import { Delivery } from './delivery.js';
import { LocalExecution } from './execution.js';
import { checkFeatures, checkTask, paramsHash, reusedTaskIdError } from './provider-checks.js';
import type { AcmpCapability, AcmpProvider, AcmpProviderOptions, ProviderEvent } from './provider-types.js';
import { RemoteWatch, StoredFeed, type TaskFeed } from './task-feed.js';
import type { AcmpTaskRecord } from './task-store.js';

export type { AcmpCapability, AcmpProvider, AcmpProviderOptions, EscrowVerifier, HandlerContext, ProviderEvent } from './provider-types.js';

const DEFAULT_HEARTBEAT_MS = 5000;
/** Liveness window when no heartbeats are advertised (docs/acmp-core.md "Multi-host liveness"). */
const NO_HEARTBEAT_LIVENESS_MS = 5000;
const NO_HEARTBEAT_ALIVE_MS = 1000;

/** Builds the Layer 1 §1 capability object: emits only what the features allow. */
export function buildCapabilityObject(outputStreaming: boolean, heartbeatIntervalMs: number | null): CapabilityObject {
  const emits: string[] = [];
  if (outputStreaming) emits.push(ACMP_METHOD.streamChunk);
  if (heartbeatIntervalMs !== null) emits.push(ACMP_METHOD.heartbeat);
  return {
    version: ACMP_VERSION,
    role: 'provider',
    // A2A binding §3.3: no acmp/inputChunk, input_streaming false.
    accepts: [ACMP_METHOD.invoke, ACMP_METHOD.cancel],
    emits,
    features: {
      output_streaming: outputStreaming,
      input_streaming: false,
      ...(heartbeatIntervalMs !== null ? { heartbeat_interval_ms: heartbeatIntervalMs } : {}),
    },
  };
}

interface LocalEntry {
  readonly hash: string;
  readonly feed: Promise<TaskFeed>;
}

/**
 * Creates a transport-free ACMP provider (Layer 1 §3). Idempotency (§3.1.1) is anchored in the task store;
 * the in-process map only caches running work so same-process duplicates join it (they never run twice,
 * also when 200 arrive at once: the map entry is set synchronously before the first await).
 */
export function createAcmpProvider(options: AcmpProviderOptions): AcmpProvider {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const store = options.store ?? new MemoryAcmpTaskStore();
  const outputStreaming = options.outputStreaming ?? true;
  const heartbeatIntervalMs = options.heartbeatIntervalMs === undefined ? DEFAULT_HEARTBEAT_MS : options.heartbeatIntervalMs;
  const aliveIntervalMs = heartbeatIntervalMs ?? NO_HEARTBEAT_ALIVE_MS;
  const livenessWindowMs = heartbeatIntervalMs === null ? NO_HEARTBEAT_LIVENESS_MS : 3 * heartbeatIntervalMs;
  const ownerId = (options.ids ?? systemIds).newId('acmphost');
  const capabilities = new Map<string, AcmpCapability>(options.capabilities.map((c) => [c.id, c]));
  const capabilityObject = buildCapabilityObject(outputStreaming, heartbeatIntervalMs);
  const local = new Map<string, LocalEntry>();
  const executions = new Map<string, LocalExecution>();
  const watches = new Set<RemoteWatch>();
  const closing = new AbortController();

  const forget = (taskId: string, entry: LocalEntry): void => {
    if (local.get(taskId) === entry) local.delete(taskId);
  };

  const feedForRecord = (record: AcmpTaskRecord, hash: string, done: () => void): TaskFeed => {
    if (record.paramsHash !== hash) throw reusedTaskIdError(record.taskId);
    if (record.outcome) {
      done();
      return new StoredFeed(record.paramsHash, record.outcome);
    }
    const watch: RemoteWatch = new RemoteWatch(record, {
      store,
      clock,
      logger,
      pollMs: options.storePollMs ?? 250,
      livenessWindowMs,
      heartbeats: heartbeatIntervalMs !== null,
      onDone: () => {
        watches.delete(watch);
        done();
      },
    });
    watches.add(watch);
    return watch.start();
  };

  const resolveFeed = async (params: InvokeParams, hash: string, done: () => void): Promise<TaskFeed> => {
    const taskId = params.task_id;
    const known = await store.get(taskId);
    if (known) return feedForRecord(known, hash, done);
    const accepted = checkTask(params, capabilities);
    if (params.escrow_id !== undefined && options.escrow) {
      // Layer 1 §3.3 -33005: the verifier throws it; anything else it throws is -33099.
      await options.escrow(params.escrow_id, params, { signal: closing.signal });
    }
    const now = clock.now();
    const claim = await store.claim({ taskId, paramsHash: hash, ownerId, createdAt: now, deadlineAt: now + resolveInvoke(params).timeoutMs });
    if (!claim.claimed) return feedForRecord(claim.existing, hash, done);
    const execution = new LocalExecution({
      params,
      accepted,
      paramsHash: hash,
      store,
      ownerId,
      providerId: options.providerId,
      heartbeatIntervalMs,
      aliveIntervalMs,
      clock,
      logger,
      onDone: () => {
        executions.delete(taskId);
        done();
      },
    });
    executions.set(taskId, execution);
    return execution.start();
  };

  /** Layer 1 §3.1.1: one feed per task_id; the map entry exists from the first synchronous moment. */
  const feedFor = (params: InvokeParams): Promise<TaskFeed> => {
    const hash = paramsHash(params);
    const existing = local.get(params.task_id);
    if (existing) return existing.hash === hash ? existing.feed : Promise.reject(reusedTaskIdError(params.task_id));
    const holder: { entry?: LocalEntry } = {};
    const done = (): void => forget(params.task_id, holder.entry!);
    const entry: LocalEntry = { hash, feed: resolveFeed(params, hash, done) };
    holder.entry = entry;
    entry.feed.catch(done);
    local.set(params.task_id, entry);
    return entry.feed;
  };

  const invoke = (rawParams: unknown, invokeOptions: { canStream: boolean; signal?: AbortSignal }): AsyncIterable<ProviderEvent> => {
    let detach = (): void => {};
    const signal = invokeOptions.signal;
    const onDetach = (): void => {
      detach();
      queue.end();
    };
    const queue = new AsyncQueue<ProviderEvent>(() => {
      detach();
      signal?.removeEventListener('abort', onDetach);
    });
    const fail = (error: unknown, taskId?: string): void => {
      if (!(error instanceof AcmpError)) logger.error('acmp.invoke_failed', { task_id: taskId, ...errorFields(error) });
      queue.push({ kind: 'error', error: toAcmpErrorObject(error, taskId === undefined ? undefined : { task_id: taskId }) });
      queue.end();
    };
    if (signal?.aborted) {
      queue.end();
      return queue;
    }
    let params: InvokeParams;
    try {
      params = parseInvokeParams(rawParams);
      checkFeatures(params, outputStreaming, invokeOptions.canStream);
    } catch (error) {
      fail(error);
      return queue;
    }
    signal?.addEventListener('abort', onDetach, { once: true });
    const delivery = new Delivery(
      params.task_id,
      { stream: params.stream === true, notify: invokeOptions.canStream },
      (event) => queue.push(event),
      () => {
        signal?.removeEventListener('abort', onDetach);
        queue.end();
      },
    );
    feedFor(params).then(
      (feed) => {
        if (!queue.closed) detach = feed.attach(delivery);
      },
      (error: unknown) => fail(error, params.task_id),
    );
    return queue;
  };

  const cancel = async (rawParams: unknown): Promise<{ found: boolean }> => {
    const { task_id: taskId } = parseCancelParams(rawParams);
    const pending = local.get(taskId);
    if (pending) await pending.feed.catch(() => undefined);
    const execution = executions.get(taskId);
    if (execution) {
      execution.cancel();
      return { found: true };
    }
    // Layer 1 §3.7 across hosts: the owner polls cancel_requested while it refreshes alive_at.
    return { found: await store.requestCancel(taskId) };
  };

  return {
    capabilityObject,
    capabilities: options.capabilities,
    invoke,
    cancel,
    outcome: async (taskId) => (await store.get(taskId))?.outcome,
    known: async (taskId) => (await store.get(taskId)) !== undefined,
    async close() {
      closing.abort(new AcmpError(ACMP_CODE.internal));
      for (const watch of watches) watch.stop();
      await Promise.all([...executions.values()].map((e) => e.stop(ACMP_CODE.internal)));
    },
  };
}

import { AsyncQueue } from '../shared/async.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { systemIds } from '../shared/ids.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { MemoryAcmpTaskStore } from './memory-task-store.js';
import { ACMP_METHOD, ACMP_VERSION, L6_METHOD } from './constants.js';
import type { Agreement } from './negotiation/agreement-store.js';
import type { AcceptParams, Ack, Offer, OfferRequestParams } from './negotiation/messages.js';
import { Negotiator } from './negotiation/negotiator.js';
import { ACMP_CODE, AcmpError, toAcmpErrorObject } from './errors.js';
import { parseCancelParams, resolveInvoke, type AcmpErrorObject, type CapabilityObject } from './messages.js';
import { Delivery } from './delivery.js';
import { LocalExecution } from './execution.js';
import { HostLiveness } from './host-liveness.js';
import {
  checkFeatures,
  checkTask,
  parseInvoke,
  reusedTaskIdError,
  sameScope,
  taskIdInUseError,
  type AcceptedTask,
} from './provider-checks.js';
import {
  LOCAL_SCOPE,
  type AcmpCapability,
  type AcmpProvider,
  type AcmpProviderOptions,
  type Admission,
  type AdmitRequest,
  type AttachOptions,
  type CancelOutcome,
  type ProviderEvent,
  type TaskEvent,
} from './provider-types.js';
import { RemoteFeed, storedFeed, type TaskFeed } from './task-feed.js';
import {
  isFinished,
  type AcmpTaskRecord,
  type AcmpTaskStore,
  type TaskEnd,
  type TaskScope,
} from './task-store.js';

export type {
  AcmpCapability,
  AcmpProvider,
  AcmpProviderOptions,
  Admission,
  AdmitRequest,
  EscrowVerifier,
  HandlerContext,
  ProviderEvent,
  TaskEvent,
} from './provider-types.js';
export { LOCAL_SCOPE } from './provider-types.js';

const DEFAULT_HEARTBEAT_MS = 5000;
/** Liveness interval when no heartbeats are advertised (docs/acmp-core.md "Hosts and liveness"). */
const NO_HEARTBEAT_INTERVAL_MS = 5000;
/** The shortest silence after which a host counts as gone (docs/acmp-core.md "Hosts and liveness"). */
const MIN_HOST_WINDOW_MS = 1000;

/** Builds the Layer 1 §1 capability object: emits only what the features allow. */
export function buildCapabilityObject(
  outputStreaming: boolean,
  heartbeatIntervalMs: number | null,
  negotiation = false,
): CapabilityObject {
  const emits: string[] = [];
  if (outputStreaming) emits.push(ACMP_METHOD.streamChunk);
  if (heartbeatIntervalMs !== null) emits.push(ACMP_METHOD.heartbeat);
  return {
    version: ACMP_VERSION,
    role: 'provider',
    // A2A binding §3.3: no acmp/inputChunk, input_streaming false.
    // Layer 6 methods are listed when served, as Layer 4 §1 lists an escrow agent's methods.
    accepts: [
      ACMP_METHOD.invoke,
      ACMP_METHOD.cancel,
      ...(negotiation ? [L6_METHOD.offerRequest, L6_METHOD.accept] : []),
    ],
    emits,
    features: {
      output_streaming: outputStreaming,
      input_streaming: false,
      ...(heartbeatIntervalMs !== null ? { heartbeat_interval_ms: heartbeatIntervalMs } : {}),
    },
  };
}

/** What one task id resolves to on this host: a task to attach to, or a refusal for that very request. */
type Slot =
  | { readonly kind: 'task'; readonly record: AcmpTaskRecord; readonly feed: TaskFeed }
  | { readonly kind: 'refusal'; readonly scope: TaskScope; readonly hash: string; readonly error: unknown };

interface LocalEntry {
  readonly slot: Promise<Slot>;
}

/**
 * Creates a transport-free ACMP provider (Layer 1 §3) over one task store, the record of truth that every
 * host sharing it reads and writes (docs/acmp-core.md "The task record").
 */
export function createAcmpProvider(options: AcmpProviderOptions): AcmpProvider {
  return new StoreBackedProvider(options);
}

class StoreBackedProvider implements AcmpProvider {
  readonly capabilityObject: CapabilityObject;
  readonly capabilities: readonly AcmpCapability[];
  readonly hostId: string;
  private readonly store: AcmpTaskStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly outputStreaming: boolean;
  private readonly heartbeatIntervalMs: number | null;
  private readonly fallbackMs: number;
  private readonly byId: ReadonlyMap<string, AcmpCapability>;
  /** One entry per task id with live work or followers here; set before the first await (§3.1.1). */
  private readonly local = new Map<string, LocalEntry>();
  private readonly executions = new Map<string, LocalExecution>();
  private readonly follows = new Set<RemoteFeed>();
  private readonly closing = new AbortController();
  private readonly liveness: HostLiveness;
  private readonly negotiator: Negotiator | undefined;

  constructor(private readonly options: AcmpProviderOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.store = options.store ?? new MemoryAcmpTaskStore();
    this.outputStreaming = options.outputStreaming ?? true;
    this.heartbeatIntervalMs =
      options.heartbeatIntervalMs === undefined ? DEFAULT_HEARTBEAT_MS : options.heartbeatIntervalMs;
    const intervalMs = this.heartbeatIntervalMs ?? NO_HEARTBEAT_INTERVAL_MS;
    this.fallbackMs = options.fallbackReadMs ?? intervalMs;
    this.hostId = (options.ids ?? systemIds).newId('acmphost');
    this.capabilities = options.capabilities;
    this.byId = new Map(options.capabilities.map((c) => [c.id, c]));
    this.capabilityObject = buildCapabilityObject(
      this.outputStreaming,
      this.heartbeatIntervalMs,
      options.negotiation !== undefined,
    );
    this.negotiator = options.negotiation
      ? new Negotiator({ clock: this.clock, ...options.negotiation }, this.byId)
      : undefined;
    // Silent for two intervals (at least MIN_HOST_WINDOW_MS, so a busy event loop is not taken for a
    // dead host) = gone; beat at least four times per window. At the default 5 s heartbeat a dead owner's
    // task is finished within 2.5 intervals, inside the buyer's 3 × heartbeat window (Layer 1 §3.6).
    const windowMs = Math.max(2 * intervalMs, MIN_HOST_WINDOW_MS);
    this.liveness = new HostLiveness({
      store: this.store,
      hostId: this.hostId,
      clock: this.clock,
      logger: this.logger,
      beatMs: Math.max(1, Math.floor(Math.min(intervalMs / 2, windowMs / 4))),
      windowMs,
      running: () => [...this.executions.keys()],
      onLost: (taskId) => void this.executions.get(taskId)?.adopt(),
    });
    this.liveness
      .start()
      .catch((error: unknown) => this.logger.warn('acmp.liveness_start_failed', errorFields(error)));
  }

  async admit(request: AdmitRequest, options: AttachOptions): Promise<Admission> {
    const { params, hash } = request.invoke;
    try {
      checkFeatures(params, this.outputStreaming, options.canStream);
    } catch (error) {
      return this.refused(error);
    }
    const entry = this.local.get(params.task_id);
    let slot = entry
      ? await entry.slot.catch((error: unknown) => this.failedSlot(request, error))
      : undefined;
    // A refusal belongs to the request it was judged for; anyone else is judged afresh.
    if (!slot || (slot.kind === 'refusal' && (slot.hash !== hash || !sameScope(slot.scope, request.scope)))) {
      slot = await this.enter(params.task_id, () => this.resolve(request)).catch((error: unknown) =>
        this.failedSlot(request, error),
      );
    }
    if (slot.kind === 'refusal') return this.refused(slot.error);
    // Layer 1 §3.1.1 and docs/acmp-core.md "Claim rules": only the same agent with the same params joins.
    if (!sameScope(slot.record.scope, request.scope)) return this.refused(taskIdInUseError(params.task_id));
    if (slot.record.paramsHash !== hash) return this.refused(reusedTaskIdError(params.task_id));
    return this.attach(slot, { ...options, stream: params.stream === true });
  }

  async join(
    taskId: string,
    scope: TaskScope,
    options: AttachOptions & { stream?: boolean },
  ): Promise<Admission | undefined> {
    const entry = this.local.get(taskId);
    let slot = entry ? await entry.slot.catch(() => undefined) : undefined;
    if (slot?.kind !== 'task') {
      const record = await this.store.get(taskId);
      if (!record || record.state !== 'running' || !sameScope(record.scope, scope)) return undefined;
      slot = await this.enter(taskId, () => this.slotFor(record, scope, record.paramsHash));
    }
    if (slot.kind !== 'task' || !sameScope(slot.record.scope, scope)) return undefined;
    return this.attach(slot, { ...options, stream: options.stream === true });
  }

  async cancelTask(taskId: string, scope: TaskScope, end: TaskEnd): Promise<CancelOutcome> {
    await this.local.get(taskId)?.slot.catch(() => undefined);
    const record = await this.store.get(taskId);
    if (!record || !sameScope(record.scope, scope)) return { kind: 'unknown' };
    if (record.state === 'finished') return { kind: 'already_finished', record };
    const execution = this.executions.get(taskId);
    if (execution) {
      const final = await execution.cancel(end);
      const cancelled =
        final.outcome.kind === 'error' &&
        final.outcome.error.code === ACMP_CODE.cancelled &&
        final.end === end;
      return cancelled ? { kind: 'cancelled', record: final } : { kind: 'already_finished', record: final };
    }
    // Layer 1 §3.7 across hosts: the outcome is stored here and now; the owner stops its work when the
    // store signals it (or at its next liveness tick, if the signal is lost).
    const error = new AcmpError(ACMP_CODE.cancelled, { task_id: taskId }).toObject();
    const finished = await this.store.finish(taskId, {
      outcome: { kind: 'error', error },
      end,
      at: this.clock.now(),
    });
    if (!finished) return { kind: 'unknown' };
    return finished.won
      ? { kind: 'cancelled', record: finished.record }
      : { kind: 'already_finished', record: finished.record };
  }

  quote(params: OfferRequestParams, scope: TaskScope): Promise<Offer> {
    return this.negotiator
      ? this.negotiator.quote(params, scope)
      : Promise.reject(new AcmpError(ACMP_CODE.methodNotFound));
  }

  accept(params: AcceptParams, scope: TaskScope): Promise<Ack> {
    return this.negotiator
      ? this.negotiator.accept(params, scope)
      : Promise.reject(new AcmpError(ACMP_CODE.methodNotFound));
  }

  async record(taskId: string, scope: TaskScope): Promise<AcmpTaskRecord | undefined> {
    const record = await this.store.get(taskId);
    return record && sameScope(record.scope, scope) ? record : undefined;
  }

  list(
    scope: TaskScope,
    query: Parameters<AcmpTaskStore['list']>[1],
  ): Promise<{ records: AcmpTaskRecord[]; total: number }> {
    return this.store.list(scope, query);
  }

  invoke(rawParams: unknown, options: AttachOptions & { scope?: TaskScope }): AsyncIterable<ProviderEvent> {
    return this.invokeEvents(rawParams, options);
  }

  async cancel(rawParams: unknown, options: { scope?: TaskScope } = {}): Promise<{ found: boolean }> {
    const { task_id: taskId } = parseCancelParams(rawParams);
    const outcome = await this.cancelTask(taskId, options.scope ?? LOCAL_SCOPE, 'completed');
    return { found: outcome.kind === 'cancelled' };
  }

  async outcome(taskId: string): Promise<AcmpTaskRecord['outcome']> {
    return (await this.store.get(taskId))?.outcome;
  }

  async drain(graceMs: number): Promise<void> {
    const running = [...this.executions.values()].map((e) => e.done);
    if (running.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.all(running), grace]);
    clearTimeout(timer);
  }

  async close(): Promise<void> {
    this.closing.abort(new AcmpError(ACMP_CODE.internal));
    for (const follow of this.follows) follow.stop();
    await Promise.all([...this.executions.values()].map((e) => e.stop(ACMP_CODE.internal)));
    await this.liveness.stop();
  }

  private async *invokeEvents(
    rawParams: unknown,
    options: AttachOptions & { scope?: TaskScope },
  ): AsyncGenerator<ProviderEvent> {
    if (options.signal?.aborted) return;
    let admission: Admission;
    try {
      const invoke = parseInvoke(rawParams);
      admission = await this.admit(
        { invoke, scope: options.scope ?? LOCAL_SCOPE, contextId: '', request: '' },
        options,
      );
    } catch (error) {
      admission = this.refused(error);
    }
    if (admission.kind === 'refused') {
      yield { kind: 'error', error: admission.error };
      return;
    }
    for await (const event of admission.events) yield toProviderEvent(event);
  }

  /** Creates the local entry of a task id synchronously, so concurrent arrivals share one resolution. */
  private enter(taskId: string, resolve: () => Promise<Slot>): Promise<Slot> {
    const holder: { entry?: LocalEntry } = {};
    const entry: LocalEntry = { slot: resolve() };
    holder.entry = entry;
    this.local.set(taskId, entry);
    const forget = (): void => {
      if (this.local.get(taskId) === holder.entry) this.local.delete(taskId);
    };
    entry.slot.then((slot) => {
      if (slot.kind === 'refusal' || !this.isLive(taskId, slot.feed)) forget();
      else this.onFeedDone(slot.feed, forget);
    }, forget);
    return entry.slot;
  }

  /** Decides what a request that found no local entry is: new work, a join, a replay or a refusal. */
  private async resolve(request: AdmitRequest): Promise<Slot> {
    const { params, hash } = request.invoke;
    const taskId = params.task_id;
    // An escrow is checked only for new work: look the task up first (verifying is a remote call).
    const known = params.escrow_id !== undefined ? await this.store.get(taskId) : undefined;
    if (known) return this.slotFor(known, request.scope, hash);
    let accepted: AcceptedTask;
    let agreement: Agreement | undefined;
    try {
      // L6 §4: an invoke under an agreement runs on its terms (docs/acmp-negotiation.md).
      agreement = await this.negotiator?.agreementFor(params, request.scope, request.references);
      accepted = checkTask(params, this.byId, agreement?.terms.price_cu);
      if (params.escrow_id !== undefined && this.options.escrow) {
        // Layer 1 §3.3 -33005: the verifier throws it; anything else it throws is -33099.
        await this.options.escrow(params.escrow_id, params, { signal: this.closing.signal });
      }
      if (agreement) await this.negotiator!.consume(agreement, taskId);
    } catch (error) {
      // Refused before any work: nothing is stored. A retry of a task stored earlier still replays it.
      const stored = params.escrow_id === undefined ? await this.store.get(taskId) : undefined;
      return stored
        ? this.slotFor(stored, request.scope, hash)
        : { kind: 'refusal', scope: request.scope, hash, error };
    }
    const now = this.clock.now();
    const task = {
      taskId,
      scope: request.scope,
      paramsHash: hash,
      contextId: request.contextId,
      request: request.request,
      hostId: this.hostId,
      createdAt: now,
      deadlineAt: now + resolveInvoke(params).timeoutMs,
    };
    const claim = await this.store.claim(task);
    if (!claim.claimed) {
      const slot = await this.slotFor(claim.existing, request.scope, hash);
      // The task id was someone else's: the agreement stays free for the invoke meant to execute it.
      if (agreement && slot.kind === 'refusal') await this.negotiator!.release(agreement, taskId);
      return slot;
    }
    const execution = new LocalExecution({
      params,
      accepted,
      store: this.store,
      hostId: this.hostId,
      providerId: this.options.providerId,
      heartbeatIntervalMs: this.heartbeatIntervalMs,
      clock: this.clock,
      logger: this.logger,
      closing: this.closing.signal,
      onDone: () => this.executions.delete(taskId),
    });
    this.executions.set(taskId, execution);
    execution.start();
    return {
      kind: 'task',
      record: { ...task, state: 'running', updatedAt: now, chunkCount: 0 },
      feed: execution,
    };
  }

  /**
   * The slot of a stored task (docs/acmp-core.md "Claim rules"): another agent's task is refused as in use
   * and the same agent's with other params as reused — never joined, replayed or revealed — else the task
   * is replayed (finished) or followed (running on another host).
   */
  private async slotFor(record: AcmpTaskRecord, scope: TaskScope, hash: string): Promise<Slot> {
    if (!sameScope(record.scope, scope))
      return { kind: 'refusal', scope, hash, error: taskIdInUseError(record.taskId) };
    if (record.paramsHash !== hash)
      return { kind: 'refusal', scope, hash, error: reusedTaskIdError(record.taskId) };
    if (isFinished(record)) return { kind: 'task', record, feed: await storedFeed(this.store, record) };
    const follow: RemoteFeed = new RemoteFeed(record.taskId, {
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      fallbackMs: this.fallbackMs,
      heartbeats: this.heartbeatIntervalMs !== null,
      onDone: () => this.follows.delete(follow),
    });
    this.follows.add(follow);
    return { kind: 'task', record, feed: await follow.start() };
  }

  private isLive(taskId: string, feed: TaskFeed): boolean {
    return (
      (feed instanceof LocalExecution && this.executions.get(taskId) === feed) ||
      (feed instanceof RemoteFeed && this.follows.has(feed))
    );
  }

  /** Calls `done` when a live feed ends (its execution or follow is removed). */
  private onFeedDone(feed: TaskFeed, done: () => void): void {
    if (feed instanceof LocalExecution || feed instanceof RemoteFeed) void feed.done.then(done);
    else done();
  }

  private attach(
    slot: Extract<Slot, { kind: 'task' }>,
    options: AttachOptions & { stream: boolean },
  ): Admission {
    const { signal } = options;
    let detach = (): void => {};
    const onDetach = (): void => {
      detach();
      queue.end();
    };
    const queue = new AsyncQueue<TaskEvent>(() => {
      detach();
      signal?.removeEventListener('abort', onDetach);
    });
    const delivery = new Delivery({
      taskId: slot.record.taskId,
      mode: { stream: options.stream, notify: options.canStream },
      sink: (event) => queue.push(event),
      end: () => {
        signal?.removeEventListener('abort', onDetach);
        queue.end();
      },
    });
    if (signal?.aborted) queue.end();
    else {
      signal?.addEventListener('abort', onDetach, { once: true });
      detach = slot.feed.attach(delivery);
    }
    return { kind: 'task', record: slot.record, events: queue };
  }

  private failedSlot(request: AdmitRequest, error: unknown): Slot {
    return { kind: 'refusal', scope: request.scope, hash: request.invoke.hash, error };
  }

  private refused(error: unknown): Admission {
    if (!(error instanceof AcmpError)) this.logger.error('acmp.invoke_failed', errorFields(error));
    return { kind: 'refused', error: toAcmpErrorObject(error) satisfies AcmpErrorObject };
  }
}

function toProviderEvent(event: TaskEvent): ProviderEvent {
  switch (event.kind) {
    case 'chunk':
    case 'heartbeat':
      return event;
    case 'result':
      return { kind: 'result', result: event.result };
    case 'error':
      return { kind: 'error', error: event.error };
  }
}

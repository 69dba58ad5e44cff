import { countRefusal, NO_METRICS, type Metrics } from '../../shared/metrics.js';
import { timerClockOf, type TimerClock } from '../../shared/clock.js';
import { isStorableId } from '../../shared/id-rules.js';
import { systemIds } from '../../shared/ids.js';
import { errorFields, silentLogger, type Logger } from '../../shared/logger.js';
import { buildCapabilityObject, withIdentity } from '../wire/capability-object.js';
import { currentSignerOf, identityOfSigner, type PartyIdentity } from '../identity/host-identity.js';
import { answerChallenge, type ProveIdentityResult } from '../identity/prove-identity.js';
import type { ProveIdentityParams } from '../wire/identity-messages.js';
import { MemoryAcmpTaskStore } from './memory-task-store.js';
import type { AcceptParams, Ack, Offer, OfferRequestParams } from '../wire/negotiation-messages.js';
import { loggedLayer6 } from './logged-layer6.js';
import { ACMP_CODE, AcmpError, toAcmpErrorObject } from '../wire/errors.js';
import { parseCancelParams, type AcmpErrorObject, type CapabilityObject } from '../wire/messages.js';
import { toProviderEvent } from './delivery.js';
import { HostLiveness } from './host-liveness.js';
import { signedAdmission, type ResultSigning } from './result-signing.js';
import { encodeInvokeRequest } from './stored-request.js';
import {
  checkFeatures,
  parseInvoke,
  reusedTaskIdError,
  sameScope,
  taskIdInUseError,
} from './provider-checks.js';
import type { ProviderNegotiation } from './provider-negotiation.js';
import {
  DEFAULT_MAX_RUNNING_TASKS,
  LOCAL_SCOPE,
  type AcmpCapability,
  type AcmpProvider,
  type AcmpProviderOptions,
  type Admission,
  type AdmitRequest,
  type AttachOptions,
  type CancelOutcome,
  type ProviderEvent,
} from './provider-types.js';
import { TaskAdmission } from './task-admission.js';
import { attachToSlot, TaskSlots, type Slot } from './task-slots.js';
import type { AcmpTaskRecord, AcmpTaskStore, TaskEnd, TaskScope } from './task-store.js';

export type {
  AcmpCapability,
  AcmpProvider,
  AcmpProviderOptions,
  Admission,
  ProviderEvent,
  TaskEvent,
} from './provider-types.js';
export { LOCAL_SCOPE } from './provider-types.js';

export { buildCapabilityObject } from '../wire/capability-object.js';

const DEFAULT_HEARTBEAT_MS = 5000;
/** Liveness interval when no heartbeats are advertised (docs/acmp-core.md "Hosts and liveness"). */
const NO_HEARTBEAT_INTERVAL_MS = 5000;
/** The shortest silence after which a host counts as gone (docs/acmp-core.md "Hosts and liveness"). */
const MIN_HOST_WINDOW_MS = 1000;

/**
 * Creates a transport-free ACMP provider (Layer 1 §3) over one task store, the record of truth that every
 * host sharing it reads and writes (docs/acmp-core.md "The task record").
 */
export function createAcmpProvider(options: AcmpProviderOptions): AcmpProvider {
  return new StoreBackedProvider(options);
}

class StoreBackedProvider implements AcmpProvider {
  private readonly baseCapability: CapabilityObject;
  private readonly identity: PartyIdentity | undefined;
  private readonly providerId: string | undefined;
  readonly capabilities: readonly AcmpCapability[];
  readonly hostId: string;
  private readonly store: AcmpTaskStore;
  private readonly clock: TimerClock;
  private readonly logger: Logger;
  private readonly metrics: Metrics;
  private readonly outputStreaming: boolean;
  private readonly heartbeatIntervalMs: number | null;
  private readonly fallbackMs: number;
  private readonly byId: ReadonlyMap<string, AcmpCapability>;
  /** The task ids with live work or followers here. */
  private readonly slots: TaskSlots;
  private readonly admission: TaskAdmission;
  private readonly closing = new AbortController();
  private readonly liveness: HostLiveness;
  private readonly negotiation: ProviderNegotiation | undefined;
  private readonly signing: ResultSigning | undefined;

  constructor(options: AcmpProviderOptions) {
    this.clock = timerClockOf(options.clock);
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics ?? NO_METRICS;
    this.store = options.store ?? new MemoryAcmpTaskStore();
    this.outputStreaming = options.outputStreaming ?? true;
    this.heartbeatIntervalMs =
      options.heartbeatIntervalMs === undefined ? DEFAULT_HEARTBEAT_MS : options.heartbeatIntervalMs;
    const intervalMs = this.heartbeatIntervalMs ?? NO_HEARTBEAT_INTERVAL_MS;
    this.fallbackMs = options.fallbackReadMs ?? intervalMs;
    this.hostId = (options.ids ?? systemIds).newId('acmphost');
    this.capabilities = options.capabilities;
    this.byId = new Map(options.capabilities.map((c) => [c.id, c]));
    // Layer 7: one identity answers proveIdentity and puts its DID in the capability object (§2.2, §3);
    // its newest key signs results (§4.1; offers are signed by the negotiation the composer hands in).
    // A bare `signer` is an identity that never rotates.
    this.identity = options.identity ?? (options.signer ? identityOfSigner(options.signer) : undefined);
    this.providerId = options.providerId;
    this.baseCapability = buildCapabilityObject(
      this.outputStreaming,
      this.heartbeatIntervalMs,
      options.negotiation !== undefined,
    );
    const signer = this.identity && currentSignerOf(this.identity);
    this.signing = signer && { signer, clock: this.clock, logger: this.logger };
    this.slots = new TaskSlots({
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      fallbackMs: this.fallbackMs,
      heartbeats: this.heartbeatIntervalMs !== null,
    });
    this.negotiation = options.negotiation;
    this.admission = new TaskAdmission({
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      hostId: this.hostId,
      providerId: options.providerId,
      heartbeatIntervalMs: this.heartbeatIntervalMs,
      capabilities: this.byId,
      negotiation: this.negotiation,
      escrow: options.escrow,
      closing: this.closing.signal,
      slots: this.slots,
      maxRunningTasks:
        options.maxRunningTasks === null ? undefined : (options.maxRunningTasks ?? DEFAULT_MAX_RUNNING_TASKS),
      signing: this.signing,
      metrics: this.metrics,
    });
    // Silent for two intervals (at least MIN_HOST_WINDOW_MS, so a busy event loop is not taken for a
    // dead host) = gone; beat at least four times per window. At the default 5 s heartbeat a dead owner's
    // task is finished within 2.5 intervals, inside the buyer's 3 × heartbeat window (Layer 1 §3.6).
    const windowMs = Math.max(2 * intervalMs, MIN_HOST_WINDOW_MS);
    this.liveness = new HostLiveness({
      store: this.store,
      hostId: this.hostId,
      clock: this.clock,
      logger: this.logger,
      metrics: this.metrics,
      beatMs: Math.max(1, Math.floor(Math.min(intervalMs / 2, windowMs / 4))),
      windowMs,
      running: () => this.slots.running(),
      onLost: (taskId) => void this.slots.execution(taskId)?.adopt(),
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
      return this.refused(error, params.capability);
    }
    const entry = this.slots.entry(params.task_id);
    let slot = entry ? await entry.catch((error: unknown) => this.failedSlot(request, error)) : undefined;
    // A refusal belongs to the request it was judged for; anyone else is judged afresh.
    if (!slot || (slot.kind === 'refusal' && (slot.hash !== hash || !sameScope(slot.scope, request.scope)))) {
      slot = await this.slots
        .enter(params.task_id, () => this.admission.resolve(request))
        .catch((error: unknown) => this.failedSlot(request, error));
    }
    if (slot.kind === 'refusal') return this.refused(slot.error, params.capability);
    // Layer 1 §3.1.1 and docs/acmp-core.md "Claim rules": only the same agent with the same params joins.
    if (!sameScope(slot.record.scope, request.scope))
      return this.refused(taskIdInUseError(params.task_id), params.capability);
    if (slot.record.paramsHash !== hash)
      return this.refused(reusedTaskIdError(params.task_id), params.capability);
    return signedAdmission(attachToSlot(slot, { ...options, stream: params.stream === true }), this.signing);
  }

  async join(
    taskId: string,
    scope: TaskScope,
    options: AttachOptions & { stream?: boolean },
  ): Promise<Admission | undefined> {
    let slot = await this.slots.entry(taskId)?.catch(() => undefined);
    if (slot?.kind !== 'task') {
      const record = await this.store.get(taskId);
      if (!record || record.state !== 'running' || !sameScope(record.scope, scope)) return undefined;
      slot = await this.slots.enter(taskId, () => this.slots.slotFor(record, scope, record.paramsHash));
    }
    if (slot.kind !== 'task' || !sameScope(slot.record.scope, scope)) return undefined;
    return signedAdmission(attachToSlot(slot, { ...options, stream: options.stream === true }), this.signing);
  }

  async cancelTask(taskId: string, scope: TaskScope, end: TaskEnd): Promise<CancelOutcome> {
    // An id no store could hold (src/shared/id-rules.ts) names no task; no store is asked.
    if (!isStorableId('taskId', taskId)) return { kind: 'unknown' };
    await this.slots.entry(taskId)?.catch(() => undefined);
    const record = await this.store.get(taskId);
    if (!record || !sameScope(record.scope, scope)) return { kind: 'unknown' };
    if (record.state === 'finished') return { kind: 'already_finished', record };
    const execution = this.slots.execution(taskId);
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

  get capabilityObject(): CapabilityObject {
    const did = this.identity?.did;
    return did !== undefined
      ? withIdentity(this.baseCapability, { did, providerId: this.providerId })
      : this.baseCapability;
  }

  proveIdentity(
    params: ProveIdentityParams,
    options?: { signal?: AbortSignal },
  ): Promise<ProveIdentityResult> {
    return answerChallenge(params, this.identity, { clock: this.clock, signal: options?.signal });
  }

  quote(params: OfferRequestParams, scope: TaskScope): Promise<Offer> {
    return this.negotiation
      ? loggedLayer6(
          this.logger,
          { name: 'quote', capability: params.capability },
          this.negotiation.quote(params, scope),
        )
      : Promise.reject(new AcmpError(ACMP_CODE.methodNotFound));
  }

  accept(params: AcceptParams, scope: TaskScope): Promise<Ack> {
    return this.negotiation
      ? loggedLayer6(this.logger, { name: 'accept' }, this.negotiation.accept(params, scope))
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

  drain(graceMs: number): Promise<void> {
    return this.slots.drain(graceMs);
  }

  async close(): Promise<void> {
    this.closing.abort(new AcmpError(ACMP_CODE.internal));
    await this.slots.stop(ACMP_CODE.internal);
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
        {
          invoke,
          scope: options.scope ?? LOCAL_SCOPE,
          contextId: '',
          request: encodeInvokeRequest(invoke.params),
        },
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

  private failedSlot(request: AdmitRequest, error: unknown): Slot {
    return { kind: 'refusal', scope: request.scope, hash: request.invoke.hash, error };
  }

  /** A refusal before any task ran; counted under the capability when this provider serves it. */
  private refused(error: unknown, capability?: string): Admission {
    if (!(error instanceof AcmpError)) this.logger.error('acmp.invoke_failed', errorFields(error));
    const object = toAcmpErrorObject(error) satisfies AcmpErrorObject;
    countRefusal(this.metrics, { capability, served: this.byId, code: object.code });
    return { kind: 'refused', error: object };
  }
}

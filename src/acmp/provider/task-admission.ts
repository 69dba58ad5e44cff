import type { Metrics } from '../../shared/metrics.js';
import type { TimerClock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { resolveInvoke } from '../wire/task-messages.js';
import { checkTask, type AcceptedTask } from './provider-checks.js';
import type { InvokeAgreement, ProviderNegotiation } from './provider-negotiation.js';
import type { AcmpCapability, AdmitRequest, EscrowVerifier } from './provider-types.js';
import type { ResultSigning } from './result-signing.js';
import type { Slot, TaskSlots } from './task-slots.js';
import type { AcmpTaskRecord, AcmpTaskStore } from './task-store.js';

/** What {@link TaskAdmission} checks new work against, and where it claims and runs it. */
export interface TaskAdmissionOptions {
  readonly store: AcmpTaskStore;
  readonly clock: TimerClock;
  readonly logger: Logger;
  readonly hostId: string;
  readonly providerId: string | undefined;
  readonly heartbeatIntervalMs: number | null;
  readonly capabilities: ReadonlyMap<string, AcmpCapability>;
  /** Layer 6 negotiation, when served: invokes under an agreement run on its terms. */
  readonly negotiation: ProviderNegotiation | undefined;
  readonly escrow: EscrowVerifier | undefined;
  /** Aborts when the provider closes (an escrow check in flight stops). */
  readonly closing: AbortSignal;
  readonly slots: TaskSlots;
  /** Running tasks per caller identity over every tenant and host (undefined: no cap). */
  readonly maxRunningTasks?: number | undefined;
  /** Signs results (Layer 7 §4.1) when the provider has a signer. */
  readonly signing: ResultSigning | undefined;
  readonly metrics: Metrics;
}

/** New work that passed its checks; `agreed` when it runs under an agreement it consumed. */
interface CheckedTask {
  readonly accepted: AcceptedTask;
  readonly agreed?: InvokeAgreement;
}

/**
 * Admission of a request that found no local entry (Layer 1 §3.1.1; docs/acmp-core.md "Claim rules"):
 * a stored task is joined, replayed or refused as the slots judge it; new work is checked, claimed in the
 * store and run here.
 */
export class TaskAdmission {
  constructor(private readonly options: TaskAdmissionOptions) {}

  /** Decides what a request that found no local entry is: new work, a join, a replay or a refusal. */
  async resolve(request: AdmitRequest): Promise<Slot> {
    const { params, hash } = request.invoke;
    const taskId = params.task_id;
    // An escrow is checked only for new work: look the task up first (verifying is a remote call).
    const known = params.escrow_id !== undefined ? await this.options.store.get(taskId) : undefined;
    if (known) return this.options.slots.slotFor(known, request.scope, hash);
    let checked: CheckedTask;
    try {
      checked = await this.checkNewTask(request);
    } catch (error) {
      // Refused before any work: nothing is stored. A retry of a task stored earlier still replays it.
      const stored = params.escrow_id === undefined ? await this.options.store.get(taskId) : undefined;
      return stored
        ? this.options.slots.slotFor(stored, request.scope, hash)
        : { kind: 'refusal', scope: request.scope, hash, error };
    }
    return this.claimAndRun(request, checked);
  }

  /**
   * The checks of new work: its agreement, capability, input and price, and its escrow; then the
   * agreement is consumed. Throws the refusal (nothing is stored).
   */
  private async checkNewTask(request: AdmitRequest): Promise<CheckedTask> {
    const { params } = request.invoke;
    // Once the slots drain, new work is refused; stored tasks are still joined and replayed.
    if (this.options.slots.draining) throw drainingRefusal(params.task_id);
    // L6 §4: an invoke under an agreement runs on its terms (docs/acmp-negotiation.md).
    const agreement = await this.options.negotiation?.agreementFor(params, request.scope, request.references);
    const accepted = checkTask(params, this.options.capabilities, agreement?.priceCu);
    if (params.escrow_id !== undefined && this.options.escrow) {
      // Layer 1 §3.3 -33005: the verifier throws it; anything else it throws is -33099.
      await this.options.escrow(params.escrow_id, params, { signal: this.options.closing });
    }
    if (!agreement) return { accepted };
    await agreement.consume(params.task_id);
    return { accepted, agreed: agreement };
  }

  /**
   * The refusal of new work while its caller runs `maxRunningTasks` tasks: -33099 with `data.reason`
   * `max_running_tasks` (docs/acmp-core.md "Limits per caller"; Layer 1 §3.3 has no capacity code, and
   * -33007 means an unadvertised feature). Retryable: the same invoke succeeds once a task of the caller
   * ends; nothing was stored.
   */
  private capRefusal(request: AdmitRequest): Slot {
    const max = this.options.maxRunningTasks ?? 0;
    this.options.logger.warn('acmp.limit_refused', {
      limit: 'max_running_tasks',
      caller: request.scope.agent,
      max,
    });
    const error = new AcmpError(
      ACMP_CODE.internal,
      { reason: 'max_running_tasks', max_running_tasks: max, task_id: request.invoke.params.task_id },
      { message: 'Too many running tasks' },
    );
    return { kind: 'refusal', scope: request.scope, hash: request.invoke.hash, error };
  }

  /** Claims the task id in the store and runs the task here; a task id claimed first elsewhere is judged as stored. */
  private async claimAndRun(request: AdmitRequest, checked: CheckedTask): Promise<Slot> {
    const { params, hash } = request.invoke;
    const now = this.options.clock.now();
    const task = {
      taskId: params.task_id,
      scope: request.scope,
      paramsHash: hash,
      contextId: request.contextId,
      request: request.request,
      hostId: this.options.hostId,
      createdAt: now,
      deadlineAt: now + resolveInvoke(params).timeoutMs,
    };
    const claim = await this.options.store.claim(task, this.options.maxRunningTasks);
    if (!claim.claimed) {
      const slot = claim.capReached
        ? this.capRefusal(request)
        : await this.options.slots.slotFor(claim.existing, request.scope, hash);
      // The task id was someone else's (or is refused): the agreement stays free for the invoke meant to
      // execute it.
      const { agreed } = checked;
      if (agreed && slot.kind === 'refusal') await agreed.release(params.task_id);
      return slot;
    }
    const record: AcmpTaskRecord = { ...task, state: 'running', updatedAt: now, chunkCount: 0 };
    return this.options.slots.run(record, {
      params,
      accepted: checked.accepted,
      store: this.options.store,
      hostId: this.options.hostId,
      providerId: this.options.providerId,
      heartbeatIntervalMs: this.options.heartbeatIntervalMs,
      clock: this.options.clock,
      logger: this.options.logger,
      closing: this.options.closing,
      signing: this.options.signing,
      metrics: this.options.metrics,
    });
  }
}

/**
 * The refusal of new work while the host drains before it stops: -33099 with `data.reason` `draining`
 * (Layer 1 §3.3 has no code for an unavailable provider; docs/operations.md "Health, readiness and
 * shutdown"). Retryable: nothing was stored, so the same invoke (same task_id) runs on another host.
 */
function drainingRefusal(taskId: string): AcmpError {
  return new AcmpError(
    ACMP_CODE.internal,
    { reason: 'draining', task_id: taskId },
    { message: 'Host is shutting down: retry on another host' },
  );
}

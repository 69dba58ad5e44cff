import type { AgentExtension, AgentSkill, Message, StreamResponse, Task } from '@a2a-js/sdk';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { capabilitySkillText } from '../../acmp/provider/capability-summary.js';
import { ACMP_EXTENSION_URI, ACMP_MEDIA_TYPE } from '../../acmp/wire/constants.js';
import { AcmpError, ACMP_CODE } from '../../acmp/wire/errors.js';
import { encodeEventRoot } from '../../acmp/wire/messages.js';
import type { AcmpProvider, Admission } from '../../acmp/provider/provider.js';
import { sleepOn, timerClockOf, type Clock, type TimerClock } from '../../shared/clock.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import type { A2ABinding, BindingCall } from '../binding.js';
import { withHistoryLength } from '../part-codec.js';
import type { TaskViewPage, TaskViewSource } from '../task-views.js';
import { CallAdmission, type KnownInvoke } from './call-admission.js';
import { acmpAgentMessage, isAcmpPart } from '../acmp-part.js';
import type { AcmpSessionBinding } from './negotiation-session.js';
import {
  finishedView,
  invokeParamsOf,
  listQuery,
  outcomeMessage,
  scopeOf,
  stateOf,
  statusUpdate,
  taskView,
} from './task-view.js';

export { MAX_TASK_ID_LENGTH } from './call-admission.js';

export interface AcmpBindingOptions {
  provider: AcmpProvider;
  /** Card extension `required` (A2A binding §2: SHOULD stay false when the card also serves plain A2A). */
  required?: boolean;
  /** Further card extensions (e.g. the escrow agents the provider accepts, docs/acmp-escrow.md). */
  extensions?: readonly AgentExtension[];
  /** Negotiation sessions (our extension, docs/acmp-negotiation.md "Session mode"); off when absent. */
  sessions?: AcmpSessionBinding;
  ids?: IdSource;
  /** Time and the drain's grace timer; a clock without timers uses the system's. */
  clock?: Clock | TimerClock;
  logger?: Logger;
}

/**
 * ACMP over A2A, provider side (seed 000, "shallow binding"): the provider core's messages travel
 * unchanged in one `application/acmp+json` data part. An ACMP task lives in one record (the provider's
 * task store); its A2A Task is a view of that record for every A2A call — SendMessage,
 * SendStreamingMessage, GetTask, ListTasks, SubscribeToTask, CancelTask. Placement of every message on
 * the A2A objects: docs/acmp-a2a-binding.md.
 */
export function createAcmpBinding(options: AcmpBindingOptions): AcmpBinding {
  return new AcmpA2ABinding(options);
}

/** The ACMP binding, with what the host needs to stop it gracefully. */
export interface AcmpBinding extends A2ABinding {
  /** Waits (at most `graceMs`) for the invokes this process serves to end. */
  drain(graceMs: number): Promise<void>;
}

class AcmpA2ABinding implements AcmpBinding, TaskViewSource {
  readonly id = 'acmp';
  private readonly required: boolean;
  readonly extraExtensions: readonly AgentExtension[];
  readonly skills: AgentSkill[];
  readonly views: readonly TaskViewSource[];
  private readonly provider: AcmpProvider;
  private readonly sessions: AcmpSessionBinding | undefined;
  private readonly ids: IdSource;
  private readonly clock: TimerClock;
  private readonly logger: Logger;
  /** The first step of every message: what its ACMP message leads to. */
  private readonly admission: CallAdmission;
  /** Calls in progress on this process (for a graceful stop). */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(options: AcmpBindingOptions) {
    this.provider = options.provider;
    this.sessions = options.sessions;
    this.views = this.sessions ? [this, this.sessions] : [this];
    this.ids = options.ids ?? systemIds;
    this.clock = timerClockOf(options.clock);
    this.logger = options.logger ?? silentLogger;
    this.admission = new CallAdmission({ provider: this.provider, sessions: this.sessions, ids: this.ids });
    this.extraExtensions = [
      ...(options.extensions ?? []),
      ...(this.sessions ? [this.sessions.extension] : []),
    ];
    this.required = options.required ?? false;
    // Price and input schema ride in the description, example inputs in `examples` (v1.0 skills have no
    // metadata): src/acmp/provider/capability-summary.ts.
    this.skills = this.provider.capabilities.map((c) => ({
      id: c.id,
      name: c.name ?? c.id,
      ...capabilitySkillText(c),
      tags: ['acmp', ...(c.tags ?? [])],
      inputModes: [ACMP_MEDIA_TYPE],
      outputModes: [ACMP_MEDIA_TYPE],
      securityRequirements: [],
    }));
  }

  /**
   * A2A binding §2: the Layer 1 §1 capability object travels as the extension's params — read per card
   * build, since the provider's did:web is known only once the host listens.
   */
  get extension(): AgentExtension {
    return {
      uri: ACMP_EXTENSION_URI,
      description: 'ACMP Layer 1 shallow binding',
      required: this.required,
      params: { ...this.provider.capabilityObject },
    };
  }

  async drain(graceMs: number): Promise<void> {
    if (this.inFlight.size === 0) return;
    const ended = new AbortController();
    const grace = sleepOn(this.clock, graceMs, ended.signal).catch(() => undefined);
    await Promise.race([Promise.allSettled([...this.inFlight]), grace]);
    ended.abort();
  }

  claims(message: Parameters<A2ABinding['claims']>[0]): boolean {
    return message.parts.some(isAcmpPart);
  }

  async sendMessage(call: BindingCall): Promise<Message | Task> {
    return this.track(this.answer(call));
  }

  sendMessageStream(call: BindingCall): AsyncGenerator<StreamResponse, void, undefined> {
    return this.streamCall(call);
  }

  async cancelTask(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const outcome = await this.provider.cancelTask(taskId, scopeOf(context), 'canceled');
    switch (outcome.kind) {
      case 'unknown':
        return this.sessions?.cancel(taskId, context);
      case 'cancelled':
        return taskView(outcome.record);
      case 'already_finished':
        // A2A §3.1.5: a canceled task is returned as it is; any other terminal task cannot be canceled.
        if (outcome.record.end === 'canceled') return taskView(outcome.record);
        throw new TaskNotCancelableError(`Task ${taskId} is in a terminal state`);
    }
  }

  /**
   * SubscribeToTask (A2A §3.1.6) on a running ACMP task: the subscriber joins the invoke like an in-flight
   * duplicate (Layer 1 §3.1.1) — the task, the chunks so far from seq 0, then the live events and the
   * final state — on this host or, through the record, on another. Finished tasks are left to the SDK,
   * which refuses terminal tasks as A2A requires.
   */
  async resubscribe(
    taskId: string,
    context: ServerCallContext,
  ): Promise<AsyncGenerator<StreamResponse, void, undefined> | undefined> {
    const scope = scopeOf(context);
    const record = await this.provider.record(taskId, scope);
    if (!record) return this.sessions?.resubscribe(taskId, context);
    if (record.state !== 'running') return undefined;
    const stream = invokeParamsOf(record)?.stream === true;
    const admission = await this.provider.join(taskId, scope, { canStream: true, stream });
    return admission?.kind === 'task' ? this.events(admission) : undefined;
  }

  // ---- TaskViewSource: the A2A Task of an ACMP invoke is a view of its record ----

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const record = await this.provider.record(taskId, scopeOf(context));
    return record && taskView(record);
  }

  async list(page: TaskViewPage, context: ServerCallContext): Promise<{ tasks: Task[]; total: number }> {
    const query = listQuery(page);
    if (!query) return { tasks: [], total: 0 };
    const { records, total } = await this.provider.list(scopeOf(context), query);
    return { tasks: records.map((record) => taskView(record)), total };
  }

  // ---- message handling ----

  private async answer(call: BindingCall): Promise<Message | Task> {
    const admitted = await this.admission.admit(call, false);
    if (admitted.kind === 'reply') return admitted.reply;
    if (admitted.kind === 'view') return withHistoryLength(admitted.task, call.configuration?.historyLength);
    const { admission, invoke } = admitted;
    // A2A §3.2.2: with returnImmediately the call answers with the task as soon as it exists; the work
    // goes on and GetTask/SubscribeToTask follow it through the record.
    if (call.configuration?.returnImmediately === true)
      return withHistoryLength(taskView(admission.record, invoke), call.configuration.historyLength);
    let final: Task | undefined;
    for await (const event of admission.events) {
      if (event.kind === 'result' || event.kind === 'error')
        final = taskView(finishedView(admission.record, event), invoke);
    }
    if (!final) return this.admission.refusal(new AcmpError(ACMP_CODE.internal));
    return withHistoryLength(final, call.configuration?.historyLength);
  }

  private async *streamCall(call: BindingCall): AsyncGenerator<StreamResponse, void, undefined> {
    let done = (): void => {};
    this.inFlight.add(new Promise<void>((resolve) => (done = resolve)));
    try {
      const admitted = await this.admission.admit(call, true);
      if (admitted.kind === 'reply') {
        yield { payload: { $case: 'message', value: admitted.reply } };
        return;
      }
      if (admitted.kind === 'view') {
        yield { payload: { $case: 'task', value: admitted.task } };
        return;
      }
      yield* this.events(admitted.admission, admitted.invoke);
    } finally {
      done();
    }
  }

  /** The stream of one admitted task: the task first, then status updates carrying each ACMP message. */
  private async *events(
    admission: Extract<Admission, { kind: 'task' }>,
    invoke?: KnownInvoke,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const { record } = admission;
    yield { payload: { $case: 'task', value: taskView(record, invoke) } };
    for await (const event of admission.events) {
      if (event.kind === 'chunk' || event.kind === 'heartbeat') {
        const message = acmpAgentMessage(encodeEventRoot(event), {
          messageId: this.ids.newId('msg'),
          taskId: record.taskId,
          contextId: record.contextId,
        });
        yield statusUpdate(record, { state: stateOf(record), message, at: this.clock.now() });
        continue;
      }
      const final = finishedView(record, event);
      yield statusUpdate(final, {
        state: stateOf(final),
        message: outcomeMessage(final, final.outcome),
        at: event.at,
      });
    }
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }
}

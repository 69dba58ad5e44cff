import {
  TaskState,
  type AgentExtension,
  type AgentSkill,
  type Message,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { ExtensionSupportRequiredError, TaskNotCancelableError } from '@a2a-js/sdk/errors';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { capabilitySkillText } from '../../acmp/capability-summary.js';
import {
  ACMP_EXTENSION_URI,
  ACMP_MEDIA_TYPE,
  ACMP_METHOD,
  L6_METHOD,
  SESSION_METHOD,
} from '../../acmp/constants.js';
import { AcmpError, ACMP_CODE, toAcmpErrorObject } from '../../acmp/errors.js';
import {
  encodeErrorRoot,
  encodeEventRoot,
  type AcmpErrorObject,
  type AcmpRoot,
  type InvokeParams,
} from '../../acmp/messages.js';
import type { AcmpProvider, Admission, TaskEvent } from '../../acmp/provider.js';
import { parsedInvoke } from '../../acmp/provider-checks.js';
import type { AcmpTaskRecord, TaskListQuery } from '../../acmp/task-store.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import type { A2ABinding, BindingCall } from '../binding.js';
import { withHistoryLength } from '../part-codec.js';
import type { TaskViewPage, TaskViewSource } from '../task-views.js';
import { acmpAgentMessage, acmpRootOf, isAcmpPart, readAcmpMessage } from './codec.js';
import type { AcmpSessionBinding } from './negotiation-session.js';
import { decodeRequest, encodeRequest, outcomeMessage, scopeOf, stateOf, taskView } from './task-view.js';

export interface AcmpBindingOptions {
  provider: AcmpProvider;
  /** Card extension `required` (A2A binding §2: SHOULD stay false when the card also serves plain A2A). */
  required?: boolean;
  /** Further card extensions (e.g. the escrow agents the provider accepts, docs/acmp-escrow.md). */
  extensions?: readonly AgentExtension[];
  /** Negotiation sessions (our extension, docs/acmp-negotiation.md "Session mode"); off when absent. */
  sessions?: AcmpSessionBinding;
  ids?: IdSource;
  clock?: Clock;
  logger?: Logger;
}

/**
 * The longest task id this host accepts (docs/acmp-a2a-binding.md §4): 36 characters, the length of a
 * UUID and of the SDK's task-id column, so an id that works on one store works on every store.
 */
export const MAX_TASK_ID_LENGTH = 36;

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

type Payload = NonNullable<StreamResponse['payload']>;

/** What a call's ACMP message leads to: a direct reply, the task as it stands, or an admitted invoke. */
type Admitted =
  | { readonly kind: 'reply'; readonly reply: Message }
  | { readonly kind: 'view'; readonly task: Task }
  | {
      readonly kind: 'task';
      readonly admission: Extract<Admission, { kind: 'task' }>;
      readonly invoke: KnownInvoke;
    };

/** The invoke message of this call and its stored text (so views need not decode it back). */
interface KnownInvoke {
  readonly request: string;
  readonly message: Message;
}

class AcmpA2ABinding implements AcmpBinding, TaskViewSource {
  readonly id = 'acmp';
  readonly extension;
  readonly extraExtensions: readonly AgentExtension[];
  readonly skills: AgentSkill[];
  readonly views: readonly TaskViewSource[];
  private readonly provider: AcmpProvider;
  private readonly sessions: AcmpSessionBinding | undefined;
  private readonly ids: IdSource;
  private readonly clock: Clock;
  private readonly logger: Logger;
  /** Calls in progress on this process (for a graceful stop). */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(options: AcmpBindingOptions) {
    this.provider = options.provider;
    this.sessions = options.sessions;
    this.views = this.sessions ? [this, this.sessions] : [this];
    this.ids = options.ids ?? systemIds;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.extraExtensions = [
      ...(options.extensions ?? []),
      ...(this.sessions ? [this.sessions.extension] : []),
    ];
    // A2A binding §2: the Layer 1 §1 capability object travels as the extension's params.
    this.extension = {
      uri: ACMP_EXTENSION_URI,
      description: 'ACMP Layer 1 shallow binding',
      required: options.required ?? false,
      params: { ...this.provider.capabilityObject } as Record<string, unknown>,
    };
    // Price and input schema ride in the description, example inputs in `examples` (v1.0 skills have no
    // metadata): src/acmp/capability-summary.ts.
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

  async drain(graceMs: number): Promise<void> {
    if (this.inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.allSettled([...this.inFlight]), grace]);
    clearTimeout(timer);
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
    const admitted = await this.admitCall(call, false);
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
    if (!final) return this.refusal(new AcmpError(ACMP_CODE.internal));
    return withHistoryLength(final, call.configuration?.historyLength);
  }

  private async *streamCall(call: BindingCall): AsyncGenerator<StreamResponse, void, undefined> {
    let done = (): void => {};
    this.inFlight.add(new Promise<void>((resolve) => (done = resolve)));
    try {
      const admitted = await this.admitCall(call, true);
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
        yield statusUpdate(record, stateOf(record), message, this.clock.now());
        continue;
      }
      const final = finishedView(record, event);
      yield statusUpdate(final, stateOf(final), outcomeMessage(final, final.outcome!), event.at);
    }
  }

  /** Reads the call's ACMP message and admits an invoke, or answers anything else directly. */
  private async admitCall(call: BindingCall, canStream: boolean): Promise<Admitted> {
    if (!call.extensionActivated) {
      // A2A §4.6: ACMP payloads are interpreted only for clients that activated the extension.
      throw new ExtensionSupportRequiredError(
        `Activate ${ACMP_EXTENSION_URI} (A2A-Extensions) to send ACMP messages`,
      );
    }
    let root: AcmpRoot;
    try {
      root = readAcmpMessage(call.message, call.wireVersion);
    } catch (error) {
      return { kind: 'reply', reply: this.refusal(error) };
    }
    if (root.kind !== 'request')
      return {
        kind: 'reply',
        reply: this.refusal(
          new AcmpError(ACMP_CODE.invalidRequest, { detail: 'a buyer sends requests, not results' }),
        ),
      };
    if (this.sessions?.handles(call, root)) {
      const answer = await this.sessions.answer(call, root);
      return 'id' in answer ? { kind: 'view', task: answer } : { kind: 'reply', reply: answer };
    }
    switch (root.method) {
      case ACMP_METHOD.invoke:
        return this.admitInvoke(call, root.params, canStream);
      case ACMP_METHOD.cancel:
        return this.inBandCancel(call, root.params.task_id);
      case ACMP_METHOD.inputChunk:
        // Seed §3.3: this binding declines input streaming.
        return {
          kind: 'reply',
          reply: this.refusal(
            new AcmpError(ACMP_CODE.featureUnsupported, {
              detail: 'input streaming is not supported by this binding',
            }),
          ),
        };
      case ACMP_METHOD.streamChunk:
      case ACMP_METHOD.heartbeat:
        return {
          kind: 'reply',
          reply: this.refusal(
            new AcmpError(ACMP_CODE.invalidRequest, { detail: `${root.method} is sent by providers` }),
          ),
        };
      case L6_METHOD.offerRequest:
        // L6 §2.1 in flat mode: a direct agent message, no task (docs/acmp-negotiation.md).
        return {
          kind: 'reply',
          reply: await this.direct(() => this.provider.quote(root.params, scopeOf(call.context))),
        };
      case L6_METHOD.accept:
        return {
          kind: 'reply',
          reply: await this.direct(() => this.provider.accept(root.params, scopeOf(call.context))),
        };
      case SESSION_METHOD.counterOffer:
        return {
          kind: 'reply',
          reply: this.refusal(
            new AcmpError(ACMP_CODE.methodNotFound, { detail: 'negotiation sessions are not served' }),
          ),
        };
    }
  }

  private async admitInvoke(call: BindingCall, params: InvokeParams, canStream: boolean): Promise<Admitted> {
    const taskId = params.task_id;
    // Seed §1: task_id is carried in both places; the two MUST agree.
    const mismatch = call.message.taskId !== '' && call.message.taskId !== taskId;
    if (mismatch)
      return {
        kind: 'reply',
        reply: this.refusal(
          new AcmpError(ACMP_CODE.invalidParams, {
            task_id: taskId,
            detail: 'Message.task_id differs from params.task_id',
          }),
        ),
      };
    if (taskId.length > MAX_TASK_ID_LENGTH) {
      return {
        kind: 'reply',
        reply: this.refusal(
          new AcmpError(ACMP_CODE.invalidParams, {
            detail: `task_id is longer than ${MAX_TASK_ID_LENGTH} characters`,
          }),
        ),
      };
    }
    let admission: Admission;
    let known: KnownInvoke;
    try {
      const contextId = call.message.contextId || this.ids.newId('ctx');
      const message = { ...call.rawMessage, taskId, contextId };
      known = { message, request: encodeRequest(message) };
      admission = await this.provider.admit(
        {
          invoke: parsedInvoke(params),
          scope: scopeOf(call.context),
          contextId,
          request: known.request,
          references: call.rawMessage.referenceTaskIds,
        },
        {
          canStream,
          ...(call.configuration?.returnImmediately === true ? { signal: AbortSignal.abort() } : {}),
        },
      );
    } catch (error) {
      return { kind: 'reply', reply: this.refusal(error) };
    }
    // Refused before any task exists: an agent Message, nothing stored (docs/acmp-a2a-binding.md §5).
    if (admission.kind === 'refused') return { kind: 'reply', reply: this.refusalOf(admission.error) };
    return { kind: 'task', admission, invoke: known };
  }

  /** In-band `acmp/cancel` (Layer 1 §3.7): the task ends -33004 and stays `completed` (binding §3.4). */
  private async inBandCancel(
    call: BindingCall,
    taskId: string,
  ): Promise<{ kind: 'reply'; reply: Message } | { kind: 'view'; task: Task }> {
    if (call.message.taskId !== '' && call.message.taskId !== taskId) {
      return {
        kind: 'reply',
        reply: this.refusal(
          new AcmpError(ACMP_CODE.invalidParams, {
            task_id: taskId,
            detail: 'Message.task_id differs from params.task_id',
          }),
        ),
      };
    }
    const outcome = await this.provider.cancelTask(taskId, scopeOf(call.context), 'completed');
    if (outcome.kind === 'unknown')
      return {
        kind: 'reply',
        reply: this.refusal(
          new AcmpError(ACMP_CODE.invalidParams, { task_id: taskId, detail: 'unknown task' }),
        ),
      };
    return { kind: 'view', task: taskView(outcome.record) };
  }

  /** A direct answer: `{acmp_result}` of the call, or its `{acmp_error}`. */
  private async direct(call: () => Promise<object>): Promise<Message> {
    try {
      return acmpAgentMessage({ acmp_result: await call() }, { messageId: this.ids.newId('msg') });
    } catch (error) {
      return this.refusal(error);
    }
  }

  /** An agent message carrying `{acmp_error}` — the one outbound mapper decides what is safe to send. */
  private refusal(error: unknown): Message {
    return this.refusalOf(toAcmpErrorObject(error));
  }

  private refusalOf(error: AcmpErrorObject): Message {
    return acmpAgentMessage(encodeErrorRoot(error), { messageId: this.ids.newId('msg') });
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }
}

/** The record as it stands once the terminal event of its invoke arrived. */
function finishedView(
  record: AcmpTaskRecord,
  event: Extract<TaskEvent, { kind: 'result' | 'error' }>,
): AcmpTaskRecord {
  const outcome =
    event.kind === 'result'
      ? { kind: 'result' as const, result: event.result }
      : { kind: 'error' as const, error: event.error };
  return { ...record, state: 'finished', outcome, end: event.end, finishedAt: event.at, updatedAt: event.at };
}

function statusUpdate(
  record: AcmpTaskRecord,
  state: TaskState,
  message: Message,
  at: number,
): StreamResponse {
  const payload: Payload = {
    $case: 'statusUpdate',
    value: {
      taskId: record.taskId,
      contextId: record.contextId,
      status: { state, message, timestamp: new Date(at).toISOString() },
      metadata: undefined,
    },
  };
  return { payload };
}

/** The invoke params of a record's stored request (to follow it as it was asked: streamed or not). */
function invokeParamsOf(record: AcmpTaskRecord): InvokeParams | undefined {
  const root = acmpRootOf(decodeRequest(record.request));
  return root?.kind === 'request' && root.method === ACMP_METHOD.invoke ? root.params : undefined;
}

/** ListTasks filters in record terms; `undefined` when no ACMP task can match (e.g. status `failed`). */
function listQuery({ params, after, limit }: TaskViewPage): TaskListQuery | undefined {
  const states: Partial<Record<TaskState, TaskListQuery['state']>> = {
    [TaskState.TASK_STATE_WORKING]: 'running',
    [TaskState.TASK_STATE_COMPLETED]: 'completed',
    [TaskState.TASK_STATE_CANCELED]: 'canceled',
  };
  const filtered = params.status !== undefined && params.status !== TaskState.TASK_STATE_UNSPECIFIED;
  const state = filtered ? states[params.status] : undefined;
  if (filtered && state === undefined) return undefined;
  const updatedAfter = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
  return {
    limit,
    ...(params.contextId ? { contextId: params.contextId } : {}),
    ...(state ? { state } : {}),
    ...(updatedAfter !== undefined && !Number.isNaN(updatedAfter) ? { updatedAfter } : {}),
    ...(after ? { after } : {}),
  };
}

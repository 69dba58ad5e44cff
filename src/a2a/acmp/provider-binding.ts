import { TaskState, type AgentSkill, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ExtensionSupportRequiredError, TaskNotCancelableError } from '@a2a-js/sdk/errors';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { ACMP_EXTENSION_URI, ACMP_MEDIA_TYPE, ACMP_METHOD } from '../../acmp/constants.js';
import { AcmpError, ACMP_CODE, toAcmpErrorObject } from '../../acmp/errors.js';
import { encodeErrorRoot, type AcmpRoot, type InvokeParams } from '../../acmp/messages.js';
import type { AcmpProvider } from '../../acmp/provider.js';
import { reusedTaskIdError } from '../../acmp/provider-checks.js';
import { sleep } from '../../shared/async.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { LocalError } from '../../shared/errors.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import type { A2ABinding, BindingCall, BindingHost } from '../binding.js';
import { decodeMessage, TERMINAL_STATES, withHistoryLength, type InboundMessage } from '../part-codec.js';
import { acmpAgentMessage, acmpRootOf, isAcmpPart, readAcmpMessage } from './codec.js';
import { recordRemoteCancel } from './remote-cancel.js';
import { callerScope, isAcmpTask, sameInvoke } from './task-rules.js';
import { startPump, type Pump } from './task-pump.js';

export interface AcmpBindingOptions {
  provider: AcmpProvider;
  /** Card extension `required` (A2A binding §2: SHOULD stay false when the card also serves plain A2A). */
  required?: boolean;
  ids?: IdSource;
  clock?: Clock;
  logger?: Logger;
}


/**
 * The longest task id this host accepts: the SDK's database task store keys tasks by `varchar(36)` (a
 * UUID). Enforced on every store so a task id that works on SQLite cannot fail on PostgreSQL.
 */
export const MAX_TASK_ID_LENGTH = 36;

/**
 * ACMP over A2A, provider side (seed 000, "shallow binding"): the provider core's messages travel
 * unchanged in one `application/acmp+json` data part; this module maps them onto A2A tasks and streams.
 * Placement of every message on the A2A objects: docs/acmp-a2a-binding.md.
 */
export function createAcmpBinding(options: AcmpBindingOptions): AcmpBinding {
  return new AcmpA2ABinding(options);
}

/** The ACMP binding, with what the host needs to stop it gracefully. */
export interface AcmpBinding extends A2ABinding {
  /**
   * Waits (at most `graceMs`) for the invokes running on this process to end and their final A2A task
   * state to be saved. Call before closing the provider, and again after it, before closing the database.
   */
  drain(graceMs: number): Promise<void>;
}

class AcmpA2ABinding implements AcmpBinding {
  readonly id = 'acmp';
  readonly extension;
  readonly skills: AgentSkill[];
  private taskStore: TaskStore | undefined;
  private readonly provider: AcmpProvider;
  private readonly ids: IdSource;
  private readonly clock: Clock;
  private readonly logger: Logger;
  /**
   * Local pumps with the caller scope that started them (a cache: the ACMP store decides idempotency,
   * the A2A task store holds state).
   */
  private readonly pumps = new Map<string, { pump: Pump; caller: string; task: Task }>();
  private readonly a2aCancelled = new Set<string>();
  /** The final task of each call's invoke, for SendMessage's answer (weak: gone with the call). */
  private readonly finals = new WeakMap<BindingCall, Promise<Task>>();

  constructor(options: AcmpBindingOptions) {
    this.provider = options.provider;
    this.ids = options.ids ?? systemIds;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    // A2A binding §2: the Layer 1 §1 capability object travels as the extension's params.
    this.extension = {
      uri: ACMP_EXTENSION_URI,
      description: 'ACMP Layer 1 shallow binding',
      required: options.required ?? false,
      params: { ...this.provider.capabilityObject } as Record<string, unknown>,
    };
    this.skills = this.provider.capabilities.map((c) => ({
      id: c.id,
      name: c.name ?? c.id,
      description: c.description ?? `ACMP capability ${c.id}`,
      tags: ['acmp', ...(c.tags ?? [])],
      examples: [],
      inputModes: [ACMP_MEDIA_TYPE],
      outputModes: [ACMP_MEDIA_TYPE],
      securityRequirements: [],
    }));
  }

  async drain(graceMs: number): Promise<void> {
    const running = [...this.pumps.values()].map((p) => p.pump.done);
    if (running.length === 0) return;
    await Promise.race([Promise.allSettled(running), sleep(graceMs)]);
  }

  attach(host: BindingHost): void {
    this.taskStore = host.taskStore;
  }

  claims(message: InboundMessage): boolean {
    return message.parts.some(isAcmpPart);
  }

  async sendMessage(call: BindingCall): Promise<Message | Task> {
    // A2A §3.2.2: with returnImmediately the call answers with the task as soon as it exists; the pump
    // runs the invoke to its end on its own and GetTask/SubscribeToTask follow it.
    const immediately = call.configuration?.returnImmediately === true;
    let reply: Message | Task | undefined;
    for await (const event of this.handle(call, false)) {
      const payload = event.payload;
      if (payload?.$case === 'message' || payload?.$case === 'task') reply = payload.value;
      if (immediately && payload?.$case === 'task') break;
    }
    if (reply === undefined) return this.refusal(new AcmpError(ACMP_CODE.internal));
    if (!('id' in reply)) return reply;
    // The pump saved the final state before its last event, so the store holds the finished task.
    // The pump's final task is what it saved; no need to read it back from the store.
    const done = this.finals.get(call);
    const task = immediately ? reply : done ? await done : ((await this.store().load(reply.id, call.context)) ?? reply);
    return withHistoryLength(task, call.configuration?.historyLength);
  }

  sendMessageStream(call: BindingCall): AsyncGenerator<StreamResponse, void, undefined> {
    return this.handle(call, true);
  }

  async cancelTask(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const task = await this.store().load(taskId, context);
    if (!task || !isAcmpTask(task)) return undefined;
    if (task.status && TERMINAL_STATES.has(task.status.state)) {
      throw new TaskNotCancelableError(`Task ${taskId} is in a terminal state`);
    }
    this.a2aCancelled.add(taskId);
    const local = this.pumps.get(taskId);
    try {
      await this.provider.cancel({ task_id: taskId, reason: 'A2A CancelTask' });
      if (local) return await local.pump.done;
      return await recordRemoteCancel({ provider: this.provider, taskStore: this.store(), ids: this.ids, clock: this.clock }, taskId, context);
    } finally {
      // The local pump clears its own entry when it ends; a remote cancel must not leave one behind.
      if (!local) this.a2aCancelled.delete(taskId);
    }
  }

  /**
   * SubscribeToTask (A2A §3.1.6) on a running ACMP task: the subscriber joins the invoke like an in-flight
   * duplicate (Layer 1 §3.1.1) — the task, the chunks so far from seq 0, then the live events and the
   * final state — on this host or, through the store, on another. Terminal tasks go to the SDK, which
   * refuses them as A2A requires.
   */
  async resubscribe(taskId: string, context: ServerCallContext): Promise<AsyncGenerator<StreamResponse, void, undefined> | undefined> {
    const task = await this.store().load(taskId, context);
    const first = task?.history[0];
    if (!task || !first || !isAcmpTask(task) || (task.status && TERMINAL_STATES.has(task.status.state))) return undefined;
    const root = acmpRootOf(first);
    if (root?.kind !== 'request' || root.method !== ACMP_METHOD.invoke) return undefined;
    const call: BindingCall = {
      message: decodeMessage(first),
      rawMessage: first,
      context,
      extensionActivated: true,
      wireVersion: context.requestedVersion,
    };
    return this.invoke(call, root.params, true);
  }

  private async *handle(call: BindingCall, canStream: boolean): AsyncGenerator<StreamResponse, void, undefined> {
    if (!call.extensionActivated) {
      // A2A §4.6: ACMP payloads are interpreted only for clients that activated the extension.
      throw new ExtensionSupportRequiredError(`Activate ${ACMP_EXTENSION_URI} (A2A-Extensions) to send ACMP messages`);
    }
    let root: AcmpRoot;
    try {
      root = readAcmpMessage(call.message, call.wireVersion);
    } catch (error) {
      yield { payload: { $case: 'message', value: this.refusal(error) } };
      return;
    }
    if (root.kind !== 'request') {
      yield { payload: { $case: 'message', value: this.refusal(new AcmpError(ACMP_CODE.invalidRequest, { detail: 'a buyer sends requests, not results' })) } };
      return;
    }
    switch (root.method) {
      case ACMP_METHOD.invoke:
        yield* this.invoke(call, root.params, canStream);
        return;
      case ACMP_METHOD.cancel:
        yield { payload: await this.cancel(call, root.params.task_id, root.params) };
        return;
      case ACMP_METHOD.inputChunk:
        // Seed §3.3: this binding declines input streaming.
        yield { payload: { $case: 'message', value: this.refusal(new AcmpError(ACMP_CODE.featureUnsupported, { detail: 'input streaming is not supported by this binding' })) } };
        return;
      case ACMP_METHOD.streamChunk:
      case ACMP_METHOD.heartbeat:
        yield { payload: { $case: 'message', value: this.refusal(new AcmpError(ACMP_CODE.invalidRequest, { detail: `${root.method} is sent by providers` })) } };
        return;
    }
  }

  private async *invoke(call: BindingCall, params: InvokeParams, canStream: boolean): AsyncGenerator<StreamResponse, void, undefined> {
    const taskId = params.task_id;
    // Seed §1: task_id is carried in both places; the two MUST agree.
    if (call.message.taskId !== '' && call.message.taskId !== taskId) {
      yield { payload: { $case: 'message', value: this.refusal(new AcmpError(ACMP_CODE.invalidParams, { task_id: taskId, detail: 'Message.task_id differs from params.task_id' })) } };
      return;
    }
    if (taskId.length > MAX_TASK_ID_LENGTH) {
      yield { payload: { $case: 'message', value: this.refusal(new AcmpError(ACMP_CODE.invalidParams, { detail: `task_id is longer than ${MAX_TASK_ID_LENGTH} characters` })) } };
      return;
    }
    const existing = await this.store().load(taskId, call.context);
    if (existing && !sameInvoke(existing, params)) {
      // Layer 1 §3.1.1 (docs/acmp-core.md "Duplicates"): refused before the stored task is touched.
      yield { payload: { $case: 'message', value: this.refusal(reusedTaskIdError(taskId)) } };
      return;
    }
    if (!existing && (await this.provider.known(taskId))) {
      // The task id is taken by another caller's task, finished or running on any host sharing the store
      // (its own caller's A2A task is saved before the work is claimed): never replay or join it.
      yield { payload: { $case: 'message', value: this.refusal(new AcmpError(ACMP_CODE.invalidParams, { task_id: taskId, detail: 'task_id is already in use' })) } };
      return;
    }
    const caller = callerScope(call.context);
    const local = this.pumps.get(taskId);
    if (local && local.caller !== caller) {
      // Running for another caller (its task is not in this caller's store scope yet or at all).
      yield { payload: { $case: 'message', value: this.refusal(new AcmpError(ACMP_CODE.invalidParams, { task_id: taskId, detail: 'task_id is already in use' })) } };
      return;
    }
    // A joiner that arrives before the owner saved the task shows the owner's task (same context id).
    const task = existing ?? local?.task ?? this.newTask(call, taskId);
    // Layer 1 §3.1.1: a duplicate never runs again — the provider core replays a finished task and lets
    // an in-flight duplicate join the running one. When the owner pump runs here, the joiner only
    // relays and waits for the owner's saved final state.
    const deps = {
      provider: this.provider,
      taskStore: this.store(),
      ids: this.ids,
      clock: this.clock,
      logger: this.logger,
      cancelledByA2A: (id: string) => this.a2aCancelled.has(id),
    };
    const start = { task, params, canStream, context: call.context };
    if (local) {
      const joiner = startPump(deps, { ...start, isNew: false, owner: false, ownerDone: local.pump.done });
      this.finals.set(call, joiner.done);
      yield* joiner.events;
      return;
    }
    const pump = startPump(deps, { ...start, isNew: !existing, owner: true });
    this.finals.set(call, pump.done);
    this.pumps.set(taskId, { pump, caller, task });
    void pump.done.finally(() => {
      if (this.pumps.get(taskId)?.pump === pump) this.pumps.delete(taskId);
      this.a2aCancelled.delete(taskId);
    });
    yield* pump.events;
  }

  private async cancel(call: BindingCall, taskId: string, params: object): Promise<StreamResponse['payload']> {
    if (call.message.taskId !== '' && call.message.taskId !== taskId) {
      return { $case: 'message', value: this.refusal(new AcmpError(ACMP_CODE.invalidParams, { task_id: taskId, detail: 'Message.task_id differs from params.task_id' })) };
    }
    const task = await this.store().load(taskId, call.context);
    if (!task) return { $case: 'message', value: this.refusal(new AcmpError(ACMP_CODE.invalidParams, { task_id: taskId, detail: 'unknown task' })) };
    // Layer 1 §3.7: a notification; the invoke is answered with -33004. We answer the A2A call with
    // the task as it stands.
    await this.provider.cancel(params);
    return { $case: 'task', value: task };
  }

  private newTask(call: BindingCall, taskId: string): Task {
    const contextId = call.message.contextId || this.ids.newId('ctx');
    const invoke: Message = { ...call.rawMessage, taskId, contextId };
    return {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date(this.clock.now()).toISOString() },
      artifacts: [],
      history: [invoke],
      metadata: undefined,
    };
  }

  /** An agent message carrying `{acmp_error}` — the one outbound mapper decides what is safe to send. */
  private refusal(error: unknown): Message {
    const object = toAcmpErrorObject(error);
    return acmpAgentMessage(encodeErrorRoot(object), this.ids.newId('msg'));
  }

  private store(): TaskStore {
    if (!this.taskStore) throw new LocalError('INVALID_STATE', 'ACMP binding used before the host attached it');
    return this.taskStore;
  }
}

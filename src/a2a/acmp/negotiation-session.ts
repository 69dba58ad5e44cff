import { TaskState, type AgentExtension, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { L6_METHOD, SESSION_EXTENSION_URI, SESSION_METHOD } from '../../acmp/wire/constants.js';
import { ACMP_CODE, AcmpError, toAcmpErrorObject } from '../../acmp/wire/errors.js';
import { encodeErrorRoot, type AcmpRoot } from '../../acmp/wire/messages.js';
import { isOpen, type NegotiationSession } from '../../acmp/negotiation/session.js';
import type { ResumeRequest, SessionMessage, SessionOutcome } from '../../acmp/negotiation/session-rules.js';
import type { SessionListQuery } from '../../acmp/negotiation/session-store.js';
import type { NegotiationSessions } from '../../acmp/negotiation/sessions.js';
import { systemClock, type TimerClock, type TimerHandle } from '../../shared/clock.js';
import { sha256Jcs } from '../../shared/jcs.js';
import { isJsonObject } from '../../shared/json.js';
import type { IdSource } from '../../shared/ids.js';
import type { BindingCall } from '../binding.js';
import { withHistoryLength } from '../part-codec.js';
import type { TaskViewPage, TaskViewSource } from '../task-views.js';
import { acmpAgentMessage } from '../acmp-part.js';
import { phasesOf, sessionTaskView } from './session-view.js';
import { encodeRequest } from '../acmp-part.js';
import { scopeOf } from './task-view.js';

/** Options of {@link AcmpSessionBinding}. */
export interface SessionBindingOptions {
  readonly sessions: NegotiationSessions;
  /** Our extension's URI (default {@link SESSION_EXTENSION_URI}); configurable, never under a2agora.org. */
  readonly uri?: string;
  readonly ids: IdSource;
  /** How often a subscriber re-reads its session when no signal came (default 1 s). */
  readonly fallbackReadMs?: number;
  /** The clock of that re-read (default the system's). */
  readonly clock?: TimerClock;
}

/**
 * Session mode over A2A (docs/acmp-negotiation.md "Session mode"): the ACMP binding routes a call here
 * when the buyer activated our extension for an `acmp/offerRequest`, or resumes a task with
 * `acmp/counterOffer` / `acmp/accept`. One negotiation is one A2A task, a view of its session record:
 * it waits in INPUT_REQUIRED with the standing offer as its status message and ends COMPLETED with the
 * Ack (or -34002 at expiry), CANCELED after CancelTask.
 */
export class AcmpSessionBinding implements TaskViewSource {
  readonly uri: string;
  readonly extension: AgentExtension;
  private readonly sessions: NegotiationSessions;

  constructor(private readonly options: SessionBindingOptions) {
    this.sessions = options.sessions;
    this.uri = options.uri ?? SESSION_EXTENSION_URI;
    this.extension = {
      uri: this.uri,
      description:
        'ACMP negotiation sessions: counter-offers in one A2A task (a2a-commerce, docs/acmp-negotiation.md)',
      required: false,
      params: this.sessions.cardParams(),
    };
  }

  /** Whether the call belongs to session mode: a resume on a task, or an offerRequest with our extension active. */
  handles(call: BindingCall, root: AcmpRoot): boolean {
    if (root.kind !== 'request') return false;
    if (root.method === SESSION_METHOD.counterOffer) return true;
    if (root.method === L6_METHOD.accept) return call.message.taskId !== '';
    return (
      root.method === L6_METHOD.offerRequest && (call.context.requestedExtensions ?? []).includes(this.uri)
    );
  }

  /**
   * Answers a session call: the task as the session stands, or an agent message with `{acmp_error}` for a
   * refusal that leaves it untouched.
   * @throws TaskNotFoundError (-32001) for a task unknown to this caller; UnsupportedOperationError (-32004)
   *   for a new message to a finished session.
   */
  async answer(call: BindingCall, root: Extract<AcmpRoot, { kind: 'request' }>): Promise<Message | Task> {
    const message: SessionMessage = {
      scope: scopeOf(call.context),
      messageId: call.message.messageId,
      hash: sha256Jcs({
        parts: call.message.parts.map((p) => (p.kind === 'data' ? p.data : null)),
        session: this.metadataOf(call) ?? null,
      }),
      encode: (taskId, contextId) => encodeRequest({ ...call.rawMessage, taskId, contextId }),
    };
    const taskId = call.message.taskId;
    let outcome: SessionOutcome;
    if (root.method === L6_METHOD.offerRequest) {
      if (taskId !== '')
        return this.refusal(
          new AcmpError(ACMP_CODE.invalidParams, { reason: 'offer_request_on_task' }),
          taskId,
        );
      outcome = await this.sessions.open({
        ...message,
        contextId: call.message.contextId,
        params: root.params,
      });
    } else {
      const resume = this.resumeCall(root, call);
      if (taskId === '' || !resume)
        return this.refusal(new AcmpError(ACMP_CODE.invalidParams, { reason: 'session_task_required' }));
      outcome = await this.sessions.resume({
        ...message,
        taskId,
        contextId: call.message.contextId,
        call: resume,
      });
    }
    switch (outcome.kind) {
      case 'session':
        return withHistoryLength(
          sessionTaskView(outcome.session, this.uri),
          call.configuration?.historyLength,
        );
      case 'refused':
        return this.refusal(outcome.error, taskId);
      case 'not_found':
        throw new TaskNotFoundError(`Task not found: ${taskId}`);
      case 'terminal':
        throw new UnsupportedOperationError(`Task ${taskId} is in a terminal state and cannot be modified.`);
    }
  }

  /** SubscribeToTask on an open session; `undefined` when the task is no open session of the caller. */
  async resubscribe(
    taskId: string,
    context: ServerCallContext,
  ): Promise<AsyncGenerator<StreamResponse, void, undefined> | undefined> {
    const scope = scopeOf(context);
    const session = await this.sessions.get(taskId, scope);
    return session && isOpen(session)
      ? this.follow(session, () => this.sessions.get(taskId, scope))
      : undefined;
  }

  /** CancelTask: an open session ends CANCELED; `undefined` when the task is no session of the caller. */
  async cancel(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const outcome = await this.sessions.cancel(taskId, scopeOf(context));
    if (outcome.kind === 'unknown') return undefined;
    if (outcome.kind === 'not_cancelable')
      throw new TaskNotCancelableError(`Task ${taskId} cannot be canceled now`);
    return sessionTaskView(outcome.session, this.uri);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const session = await this.sessions.get(taskId, scopeOf(context));
    return session && sessionTaskView(session, this.uri);
  }

  async list(
    { params, after, limit }: TaskViewPage,
    context: ServerCallContext,
  ): Promise<{ tasks: Task[]; total: number }> {
    const filtered = params.status !== undefined && params.status !== TaskState.TASK_STATE_UNSPECIFIED;
    const updatedAfter = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    const query: SessionListQuery = {
      limit,
      ...(params.contextId ? { contextId: params.contextId } : {}),
      ...(filtered ? { phases: phasesOf(params.status) } : {}),
      ...(updatedAfter !== undefined && !Number.isNaN(updatedAfter) ? { updatedAfter } : {}),
      ...(after ? { after } : {}),
    };
    const { sessions, total } = await this.sessions.list(scopeOf(context), query);
    return { tasks: sessions.map((s) => sessionTaskView(s, this.uri)), total };
  }

  /**
   * The task, then a status update for every change until the session ends: also across an
   * INPUT_REQUIRED (a subscriber asked to watch; the session's expiry is what it waits for). Changes come
   * as store signals from any host, with a periodic re-read (which also evaluates expiry) as fallback.
   */
  private async *follow(
    first: NegotiationSession,
    read: () => Promise<NegotiationSession | undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    yield { payload: { $case: 'task', value: sessionTaskView(first, this.uri) } };
    let version = first.version;
    let dirty = false;
    let wake = (): void => {};
    let timer: TimerHandle | undefined;
    const clock = this.options.clock ?? systemClock;
    const unwatch = this.sessions.watch(first.id, () => {
      dirty = true;
      wake();
    });
    try {
      for (;;) {
        if (!dirty)
          await new Promise<void>(
            (resolve) => (
              (wake = resolve),
              (timer = clock.setTimeout(resolve, this.options.fallbackReadMs ?? 1_000))
            ),
          );
        timer?.cancel();
        dirty = false;
        const session = await read();
        if (!session) return;
        if (session.version !== version) {
          version = session.version;
          const view = sessionTaskView(session, this.uri);
          yield {
            payload: {
              $case: 'statusUpdate',
              value: {
                taskId: view.id,
                contextId: view.contextId,
                status: view.status,
                metadata: view.metadata,
              },
            },
          };
        }
        if (!isOpen(session)) return;
      }
    } finally {
      unwatch();
      timer?.cancel();
    }
  }

  private resumeCall(
    root: Extract<AcmpRoot, { kind: 'request' }>,
    call: BindingCall,
  ): ResumeRequest['call'] | undefined {
    if (root.method === SESSION_METHOD.counterOffer) return { method: 'counter', params: root.params };
    if (root.method !== L6_METHOD.accept) return undefined;
    const hash = this.metadataOf(call)?.offer_hash;
    return {
      method: 'accept',
      params: root.params,
      ...(typeof hash === 'string' ? { offerHash: hash } : {}),
    };
  }

  /** Our extension's metadata on the buyer's message (e.g. an acceptance's `offer_hash`). */
  private metadataOf(call: BindingCall): Record<string, unknown> | undefined {
    const metadata = call.message.metadata?.[this.uri];
    return isJsonObject(metadata) ? metadata : undefined;
  }

  private refusal(error: unknown, taskId = ''): Message {
    return acmpAgentMessage(encodeErrorRoot(toAcmpErrorObject(error)), {
      messageId: this.options.ids.newId('msg'),
      taskId,
    });
  }
}

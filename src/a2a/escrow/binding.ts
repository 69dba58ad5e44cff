import {
  TaskState,
  type AgentExtension,
  type AgentSkill,
  type Message,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { ExtensionSupportRequiredError, TaskNotCancelableError } from '@a2a-js/sdk/errors';
import { ServerCallContext, type PushNotificationSender } from '@a2a-js/sdk/server';
import { ACMP_EXTENSION_URI, ACMP_MEDIA_TYPE, ACMP_VERSION } from '../../acmp/wire/constants.js';
import { ACMP_CODE, AcmpError } from '../../acmp/wire/errors.js';
import type { EscrowAgent, EscrowCaller } from '../../acmp/escrow/agent.js';
import { AMOUNT_UNIT } from '../../acmp/escrow/amounts.js';
import { ESCROW_AGENT_ROLE, ESCROW_METHODS, ESCROW_PROFILE_URI } from '../../acmp/escrow/constants.js';
import { toEscrowErrorObject } from '../../acmp/escrow/errors.js';
import type { EscrowRecord } from '../../acmp/escrow/record.js';
import { sleep } from '../../shared/async.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { TRACE_ATTR, failActiveSpan } from '../../shared/tracing.js';
import type { A2ABinding, BindingCall, BindingHost } from '../binding.js';
import { callerIdentity } from '../caller.js';
import type { TaskViewPage, TaskViewSource } from '../task-views.js';
import {
  escrowReply,
  escrowStatusMessage,
  escrowTaskState,
  escrowTaskView,
  isEscrowMessage,
  readEscrowRequest,
} from './codec.js';

export interface EscrowBindingOptions {
  agent: EscrowAgent;
  /** The ACMP extension's `required` flag; true suits a host that only serves escrow (binding §2). */
  required?: boolean;
  ids?: IdSource;
  /** How often a subscriber re-reads its escrow when no change signal arrived (default 1 s). */
  followMs?: number;
}

/**
 * The escrow agent over A2A (docs/acmp-escrow.md): each Layer 4 method is one SendMessage with one ACMP
 * data part and no task, answered by an agent Message `{acmp_result}` / `{acmp_error}` (A2A binding §1).
 * Each escrow is also shown as an A2A Task (id = escrow_id) to its two parties — GetTask, ListTasks and
 * SubscribeToTask read the escrow's one record (views), so a buyer hears of a claim when it is filed.
 */
export function createEscrowBinding(options: EscrowBindingOptions): A2ABinding {
  return new EscrowA2ABinding(options);
}

class EscrowA2ABinding implements A2ABinding, TaskViewSource {
  readonly id = 'escrow';
  readonly narrowClaim = true;
  readonly extension: AgentExtension;
  readonly extraExtensions: readonly AgentExtension[];
  readonly skills: AgentSkill[];
  readonly views: TaskViewSource = this;
  private readonly agent: EscrowAgent;
  private readonly ids: IdSource;
  private readonly followMs: number;
  private pushSender: PushNotificationSender | undefined;

  constructor(options: EscrowBindingOptions) {
    this.agent = options.agent;
    this.ids = options.ids ?? systemIds;
    this.followMs = options.followMs ?? 1_000;
    const s = this.agent.settings;
    // L4 §1: the agent advertises role "escrow-agent" and accepts the seven methods (over A2A as the
    // ACMP extension's params, A2A binding §2).
    this.extension = {
      uri: ACMP_EXTENSION_URI,
      description: 'ACMP Layer 4 escrow agent',
      required: options.required ?? false,
      params: {
        version: ACMP_VERSION,
        role: ESCROW_AGENT_ROLE,
        accepts: [...ESCROW_METHODS],
        emits: [],
        features: {},
      },
    };
    this.extraExtensions = [
      {
        uri: ESCROW_PROFILE_URI,
        description: 'a2a-commerce escrow profile: amounts, windows, disputes (docs/acmp-escrow.md)',
        required: false,
        params: {
          amount_unit: AMOUNT_UNIT,
          challenge_window_ms: {
            default: s.defaultChallengeWindowMs,
            min: s.minChallengeWindowMs,
            max: s.maxChallengeWindowMs,
          },
          dispute: { resolution_deadline_ms: s.disputeDeadlineMs, default_outcome: s.defaultOutcome },
          mirror_tasks: true,
          rails: ['credit-ledger'],
        },
      },
    ];
    this.skills = [
      {
        id: 'acmp-escrow',
        name: 'ACMP escrow agent',
        description:
          'Holds CU between a buyer and a provider: lock, bind, release, reclaim, claim, dispute, status (ACMP Layer 4).',
        tags: ['acmp', 'escrow'],
        examples: [],
        inputModes: [ACMP_MEDIA_TYPE],
        outputModes: [ACMP_MEDIA_TYPE],
        securityRequirements: [],
      },
    ];
  }

  /**
   * With push on (docs/host.md), each change this process commits is delivered to the webhooks the buyer
   * and the payee registered for the escrow's task — once, by the host that made the change.
   */
  attach(host: BindingHost): void {
    this.pushSender = host.pushSender;
    if (this.pushSender) this.agent.onCommitted((record) => void this.push(record).catch(() => undefined));
  }

  claims(message: Parameters<A2ABinding['claims']>[0]): boolean {
    return isEscrowMessage(message);
  }

  sendMessage(call: BindingCall): Promise<Message> {
    return this.answer(call);
  }

  async *sendMessageStream(call: BindingCall): AsyncGenerator<StreamResponse, void, undefined> {
    yield { payload: { $case: 'message', value: await this.answer(call) } };
  }

  /** An escrow settles through its operations: CancelTask on it is refused (-32002) for its parties. */
  async cancelTask(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    if (!(await this.load(taskId, context))) return undefined;
    throw new TaskNotCancelableError(`Escrow ${taskId} cannot be canceled: release, reclaim or dispute it`);
  }

  /**
   * SubscribeToTask (A2A §3.1.6) on an escrow that is not closed: the task, then one status update per
   * transition (claim, dispute, release, auto-release, expiry, resolution) until it closes. A closed escrow
   * is left to the SDK, which refuses a terminal task as A2A requires.
   */
  async resubscribe(
    taskId: string,
    context: ServerCallContext,
  ): Promise<AsyncGenerator<StreamResponse, void, undefined> | undefined> {
    const record = await this.partyView(taskId, context);
    if (!record || record.state === 'closed') return undefined;
    return this.follow(record);
  }

  // ---- TaskViewSource ----

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const record = await this.partyView(taskId, context);
    return record && escrowTaskView(record);
  }

  async list(
    { params, after, limit }: TaskViewPage,
    context: ServerCallContext,
  ): Promise<{ tasks: Task[]; total: number }> {
    const filtered = params.status !== undefined && params.status !== TaskState.TASK_STATE_UNSPECIFIED;
    if (
      filtered &&
      params.status !== TaskState.TASK_STATE_WORKING &&
      params.status !== TaskState.TASK_STATE_COMPLETED
    )
      return { tasks: [], total: 0 };
    const updatedAfter = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : Number.NaN;
    const caller = callerOf(context);
    const { records, total } = await this.agent.list(
      { tenant: caller.tenant, identity: caller.party },
      {
        limit,
        ...(filtered ? { closed: params.status === TaskState.TASK_STATE_COMPLETED } : {}),
        ...(params.contextId ? { contextId: params.contextId } : {}),
        ...(Number.isNaN(updatedAfter) ? {} : { updatedAfter }),
        ...(after ? { after: { updatedAt: after.updatedAt, escrowId: after.taskId } } : {}),
      },
    );
    return { tasks: records.map(escrowTaskView), total };
  }

  // ---- internals ----

  private async answer(call: BindingCall): Promise<Message> {
    if (!call.extensionActivated) {
      // A2A §4.6: ACMP payloads are interpreted only for clients that activated the extension.
      throw new ExtensionSupportRequiredError(
        `Activate ${ACMP_EXTENSION_URI} (A2A-Extensions) to send ACMP messages`,
      );
    }
    try {
      const { method, params } = readEscrowRequest(call.message, call.wireVersion);
      if (call.message.taskId !== '' && call.message.taskId !== params.escrow_id) {
        throw new AcmpError(ACMP_CODE.invalidParams, {
          detail: 'Message.task_id differs from params.escrow_id',
        });
      }
      return escrowReply(
        await this.agent.handle(callerOf(call.context), method, params),
        this.ids.newId('msg'),
      );
    } catch (error) {
      const object = toEscrowErrorObject(error);
      failActiveSpan({ [TRACE_ATTR.acmpErrorCode]: object.code });
      return escrowReply({ kind: 'error', error: object }, this.ids.newId('msg'));
    }
  }

  /** The escrow as it stands now, when the caller is one of its parties (A2A §13.1: others see nothing). */
  private async partyView(escrowId: string, context: ServerCallContext): Promise<EscrowRecord | undefined> {
    const record = await this.agent.view(escrowId);
    const caller = callerOf(context);
    const party =
      record !== undefined &&
      record.tenant === caller.tenant &&
      (caller.party === record.buyer || caller.party === record.payee);
    return party ? record : undefined;
  }

  private async push(record: EscrowRecord): Promise<void> {
    const sender = this.pushSender;
    if (!sender) return;
    const update: StreamResponse = { payload: { $case: 'statusUpdate', value: statusUpdateOf(record) } };
    for (const party of [record.buyer, record.payee]) {
      if (party === null) continue;
      // The configs are stored under the identity that registered them (the SDK store's owner scope).
      const context = new ServerCallContext({
        user: { isAuthenticated: true, userName: party },
        ...(record.tenant === '' ? {} : { tenant: record.tenant }),
      });
      await sender.send(update, context, escrowTaskView(record));
    }
  }

  private async *follow(first: EscrowRecord): AsyncGenerator<StreamResponse, void, undefined> {
    let wake: () => void = () => {};
    let signalled = false;
    const unwatch = this.agent.watch(first.escrowId, () => {
      signalled = true;
      wake();
    });
    const stop = new AbortController();
    try {
      yield { payload: { $case: 'task', value: escrowTaskView(first) } };
      let seq = first.seq;
      for (;;) {
        if (!signalled)
          await Promise.race([
            new Promise<void>((resolve) => (wake = resolve)),
            sleep(this.followMs, { signal: stop.signal }).catch(() => undefined),
          ]);
        signalled = false;
        const record = await this.agent.view(first.escrowId);
        if (!record || record.seq === seq) continue;
        seq = record.seq;
        yield { payload: { $case: 'statusUpdate', value: statusUpdateOf(record) } };
        if (record.state === 'closed') return;
      }
    } finally {
      unwatch();
      stop.abort();
    }
  }
}

/** The TaskStatusUpdateEvent of an escrow's current state. */
function statusUpdateOf(record: EscrowRecord) {
  const status = {
    state: escrowTaskState(record),
    message: escrowStatusMessage(record),
    timestamp: new Date(record.updatedAt).toISOString(),
  };
  return { taskId: record.escrowId, contextId: record.contextId, status, metadata: undefined };
}

function callerOf(context: ServerCallContext): EscrowCaller {
  return { tenant: context.tenant ?? '', party: callerIdentity(context) };
}

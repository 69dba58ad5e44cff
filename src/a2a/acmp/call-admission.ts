import type { Message, Task } from '@a2a-js/sdk';
import { ExtensionSupportRequiredError } from '@a2a-js/sdk/errors';
import {
  ACMP_EXTENSION_URI,
  ACMP_METHOD,
  L6_METHOD,
  L7_METHOD,
  SESSION_METHOD,
} from '../../acmp/wire/constants.js';
import { AcmpError, ACMP_CODE, toAcmpErrorObject } from '../../acmp/wire/errors.js';
import { encodeErrorRoot, type AcmpErrorObject, type AcmpRoot } from '../../acmp/wire/messages.js';
import { type InvokeParams } from '../../acmp/wire/task-messages.js';
import type { AcmpProvider, Admission } from '../../acmp/provider/provider.js';
import { parsedInvoke } from '../../acmp/provider/provider-checks.js';
import { ID_LIMITS, quoteId } from '../../shared/id-rules.js';
import type { IdSource } from '../../shared/ids.js';
import { TRACE_ATTR, failActiveSpan } from '../../shared/tracing.js';
import type { BindingCall } from '../binding.js';
import { acmpAgentMessage, readAcmpMessage } from '../acmp-part.js';
import type { AcmpSessionBinding } from './negotiation-session.js';
import { encodeRequest } from '../acmp-part.js';
import { scopeOf, taskView } from './task-view.js';

/**
 * The longest task id this host accepts (docs/acmp-a2a-binding.md §4): the host's id limit
 * (src/shared/id-rules.ts), which the invoke schema applies on every binding and store.
 */
export const MAX_TASK_ID_LENGTH = ID_LIMITS.id;

/** The invoke message of this call and its stored text (so views need not decode it back). */
export interface KnownInvoke {
  readonly request: string;
  readonly message: Message;
}

/** What a call's ACMP message leads to: a direct reply, the task as it stands, or an admitted invoke. */
export type Admitted =
  | { readonly kind: 'reply'; readonly reply: Message }
  | { readonly kind: 'view'; readonly task: Task }
  | {
      readonly kind: 'task';
      readonly admission: Extract<Admission, { kind: 'task' }>;
      readonly invoke: KnownInvoke;
    };

/** What {@link CallAdmission} answers with. */
export interface CallAdmissionOptions {
  readonly provider: AcmpProvider;
  /** Negotiation sessions; without them session messages are refused -32601. */
  readonly sessions: AcmpSessionBinding | undefined;
  readonly ids: IdSource;
}

/**
 * The provider's first step on every A2A message of the ACMP binding: reads the call's one ACMP message
 * (A2A binding §1), admits an `acmp/invoke` as a task, carries out an in-band `acmp/cancel`, answers the
 * Layer 6 calls directly, and refuses everything else with an `{acmp_error}` agent message.
 */
export class CallAdmission {
  constructor(private readonly options: CallAdmissionOptions) {}

  /**
   * Reads the call's ACMP message and admits an invoke, or answers anything else directly.
   * @throws ExtensionSupportRequiredError when the client did not activate the ACMP extension (A2A §4.6).
   */
  async admit(call: BindingCall, canStream: boolean): Promise<Admitted> {
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
      return this.refuse(error);
    }
    if (root.kind !== 'request')
      return this.refuse(
        new AcmpError(ACMP_CODE.invalidRequest, { detail: 'a buyer sends requests, not results' }),
      );
    const { sessions, provider } = this.options;
    if (sessions?.handles(call, root)) {
      const answer = await sessions.answer(call, root);
      return 'id' in answer ? { kind: 'view', task: answer } : { kind: 'reply', reply: answer };
    }
    switch (root.method) {
      case ACMP_METHOD.invoke:
        return this.admitInvoke(call, root.params, canStream);
      case ACMP_METHOD.cancel:
        return this.inBandCancel(call, root.params.task_id);
      case ACMP_METHOD.inputChunk:
        // Seed §3.3: this binding declines input streaming.
        return this.refuse(
          new AcmpError(ACMP_CODE.featureUnsupported, {
            detail: 'input streaming is not supported by this binding',
          }),
        );
      case ACMP_METHOD.streamChunk:
      case ACMP_METHOD.heartbeat:
        return this.refuse(
          new AcmpError(ACMP_CODE.invalidRequest, { detail: `${root.method} is sent by providers` }),
        );
      case L6_METHOD.offerRequest:
        // L6 §2.1 in flat mode: a direct agent message, no task (docs/acmp-negotiation.md).
        return {
          kind: 'reply',
          reply: await this.direct(() => provider.quote(root.params, scopeOf(call.context))),
        };
      case L6_METHOD.accept:
        return {
          kind: 'reply',
          reply: await this.direct(() => provider.accept(root.params, scopeOf(call.context))),
        };
      case L7_METHOD.proveIdentity:
        // Layer 7 §3: a direct agent message, like the Layer 6 calls.
        return { kind: 'reply', reply: await this.direct(() => provider.proveIdentity(root.params)) };
      case SESSION_METHOD.counterOffer:
        return this.refuse(
          new AcmpError(ACMP_CODE.methodNotFound, { detail: 'negotiation sessions are not served' }),
        );
    }
  }

  /** An agent message carrying `{acmp_error}` — the one outbound mapper decides what is safe to send. */
  refusal(error: unknown): Message {
    return this.refusalOf(toAcmpErrorObject(error));
  }

  private async admitInvoke(call: BindingCall, params: InvokeParams, canStream: boolean): Promise<Admitted> {
    const taskId = params.task_id;
    // Seed §1: task_id is carried in both places; the two MUST agree.
    if (call.message.taskId !== '' && call.message.taskId !== taskId)
      return this.refuseTaskIdMismatch(taskId);
    let admission: Admission;
    let known: KnownInvoke;
    try {
      const contextId = call.message.contextId || this.options.ids.newId('ctx');
      const message = { ...call.rawMessage, taskId, contextId };
      known = { message, request: encodeRequest(message) };
      admission = await this.options.provider.admit(
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
      return this.refuse(error);
    }
    // Refused before any task exists: an agent Message, nothing stored (docs/acmp-a2a-binding.md §5).
    if (admission.kind === 'refused') return { kind: 'reply', reply: this.refusalOf(admission.error) };
    return { kind: 'task', admission, invoke: known };
  }

  /** In-band `acmp/cancel` (Layer 1 §3.7): the task ends -33004 and stays `completed` (binding §3.4). */
  private async inBandCancel(call: BindingCall, taskId: string): Promise<Admitted> {
    if (call.message.taskId !== '' && call.message.taskId !== taskId)
      return this.refuseTaskIdMismatch(taskId);
    const outcome = await this.options.provider.cancelTask(taskId, scopeOf(call.context), 'completed');
    if (outcome.kind === 'unknown')
      return this.refuse(
        new AcmpError(ACMP_CODE.invalidParams, { task_id: quoteId(taskId), detail: 'unknown task' }),
      );
    return { kind: 'view', task: taskView(outcome.record) };
  }

  /** -32602 for a message whose `task_id` is not the one in its params (seed §1). */
  private refuseTaskIdMismatch(taskId: string): Admitted {
    return this.refuse(
      new AcmpError(ACMP_CODE.invalidParams, {
        task_id: quoteId(taskId),
        detail: 'Message.task_id differs from params.task_id',
      }),
    );
  }

  /** A direct answer: `{acmp_result}` of the call, or its `{acmp_error}`. */
  private async direct(call: () => Promise<object>): Promise<Message> {
    try {
      return acmpAgentMessage({ acmp_result: await call() }, { messageId: this.options.ids.newId('msg') });
    } catch (error) {
      return this.refusal(error);
    }
  }

  private refuse(error: unknown): Admitted {
    return { kind: 'reply', reply: this.refusal(error) };
  }

  private refusalOf(error: AcmpErrorObject): Message {
    failActiveSpan({ [TRACE_ATTR.acmpErrorCode]: error.code });
    return acmpAgentMessage(encodeErrorRoot(error), { messageId: this.options.ids.newId('msg') });
  }
}

import type { Message, StreamResponse, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { A2AError, isJsonRpcError, isRestError } from '@a2a-js/sdk/errors';
import { LocalError } from '../../shared/errors.js';
import { ACMP_EXTENSION_URI, ACMP_METHOD } from '../../acmp/wire/constants.js';
import { encodeRequestRoot, eventOfRoot, type AcmpEvent, type AcmpRoot } from '../../acmp/wire/messages.js';
import { type CancelParams, type InvokeParams } from '../../acmp/wire/task-messages.js';
import type { AcmpBuyerTransport } from '../../acmp/buyer/buyer.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { encodeUserMessage } from '../part-codec.js';
import type { InvokeLink } from './buyer-negotiation.js';
import { acmpPart, acmpRootOf } from '../acmp-part.js';

const EXTENSIONS = { 'A2A-Extensions': ACMP_EXTENSION_URI };

/**
 * The buyer core's transport over A2A: `acmp/invoke` as SendStreamingMessage whenever the agent supports
 * A2A streaming — also for `stream: false`, so heartbeats (A2A binding §3.2) reach the buyer's liveness
 * window — else as SendMessage; `acmp/cancel` as SendMessage on the task. Both carry
 * `Message.task_id = params.task_id` (seed §1) and activate the ACMP extension.
 */
export function createA2AAcmpTransport(
  client: Client,
  ids: IdSource = systemIds,
  options: {
    streaming?: boolean;
    links?: (taskId: string) => InvokeLink | undefined;
  } = {},
): AcmpBuyerTransport {
  return new A2AAcmpTransport(client, ids, {
    streaming: options.streaming ?? true,
    links: options.links,
  });
}

/** The buyer core's transport over A2A; see {@link createA2AAcmpTransport}. */
class A2AAcmpTransport implements AcmpBuyerTransport {
  constructor(
    private readonly client: Client,
    private readonly ids: IdSource,
    private readonly options: {
      streaming: boolean;
      links: ((taskId: string) => InvokeLink | undefined) | undefined;
    },
  ) {}

  async *send(
    params: InvokeParams,
    options: { stream: boolean; signal: AbortSignal },
  ): AsyncIterable<AcmpEvent> {
    const callOptions = {
      signal: options.signal,
      serviceParameters: EXTENSIONS,
    };
    try {
      if (!this.options.streaming) {
        const reply = await this.client.sendMessage(this.request(ACMP_METHOD.invoke, params), callOptions);
        const event = terminalOf(reply);
        if (event) yield event;
        return;
      }
      for await (const response of this.client.sendMessageStream(
        this.request(ACMP_METHOD.invoke, params),
        callOptions,
      )) {
        const event = eventOf(response);
        if (event) yield event;
      }
    } catch (error) {
      throw classify(error);
    }
  }

  async cancel(params: CancelParams, options?: { signal?: AbortSignal }): Promise<void> {
    await this.client.sendMessage(this.request(ACMP_METHOD.cancel, params), {
      signal: options?.signal,
      serviceParameters: EXTENSIONS,
    });
  }

  /** The SendMessage request carrying one ACMP request root, on the task `params.task_id`. */
  private request(method: string, params: { task_id: string }) {
    // An invoke under a session agreement names the negotiation task, in its context (docs/acmp-negotiation.md "From agreement to invoke").
    const link = this.options.links?.(params.task_id);
    const message = encodeUserMessage({
      messageId: this.ids.newId('msg'),
      taskId: params.task_id,
      parts: [acmpPart(encodeRequestRoot(method as typeof ACMP_METHOD.invoke, params))],
      extensions: [ACMP_EXTENSION_URI],
      ...(link ? { contextId: link.contextId } : {}),
    });
    return {
      tenant: '',
      message: link ? { ...message, referenceTaskIds: [...link.referenceTaskIds] } : message,
      configuration: undefined,
      metadata: undefined,
    };
  }
}

/**
 * An error response from the peer (JSON-RPC error, google.rpc.Status, A2A error) is a refusal the buyer
 * must not retry — wrong credentials, an extension not supported, a malformed request; anything else
 * (connection refused or reset, a stream cut off) is a transport failure the buyer core may retry.
 */
function classify(error: unknown): unknown {
  if (error instanceof A2AError || isJsonRpcError(error) || isRestError(error)) {
    const message = error instanceof Error ? error.message : 'refused';
    return new LocalError('REFUSED', `the provider refused the call: ${message}`, { cause: error });
  }
  return error;
}

function toEvent(root: AcmpRoot | undefined): AcmpEvent | undefined {
  return root && eventOfRoot(root);
}

/** The ACMP event a stream response carries (status messages, or a finished task's final message). */
function eventOf(response: StreamResponse): AcmpEvent | undefined {
  const payload = response.payload;
  switch (payload?.$case) {
    case 'statusUpdate':
      return toEvent(acmpRootOf(payload.value.status?.message));
    case 'message':
      return toEvent(acmpRootOf(payload.value));
    case 'task':
    case 'artifactUpdate':
    case undefined:
      return undefined;
  }
}

/** The terminal ACMP event of a non-streamed reply: a refusal message, or the task's final status message. */
function terminalOf(reply: Message | Task): AcmpEvent | undefined {
  if (!('id' in reply)) return toEvent(acmpRootOf(reply));
  return toEvent(acmpRootOf(reply.status?.message));
}

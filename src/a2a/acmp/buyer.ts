import type { AgentCard, Message, StreamResponse, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { A2AError, isJsonRpcError, isRestError } from '@a2a-js/sdk/errors';
import { LocalError } from '../../shared/errors.js';
import { ACMP_EXTENSION_URI, ACMP_METHOD } from '../../acmp/constants.js';
import { AcmpError, ACMP_CODE } from '../../acmp/errors.js';
import {
  CapabilityObjectSchema,
  encodeRequestRoot,
  eventOfRoot,
  type AcmpEvent,
  type AcmpRoot,
  type CancelParams,
  type CapabilityObject,
  type InvokeParams,
} from '../../acmp/messages.js';
import {
  createAcmpBuyerCore,
  type AcmpBuyerCore,
  type AcmpBuyerTransport,
  type BuyerEvent,
  type BuyerCallPolicy,
  type InvokeInput,
} from '../../acmp/buyer.js';
import type { AcmpResult } from '../../acmp/messages.js';
import { SignatureCheck } from '../../acmp/signature-policy.js';
import {
  createAcmpNegotiationClient,
  type AcmpNegotiationClient,
  type NegotiatedAgreement,
} from './negotiation-client.js';
import {
  createBuyerNegotiator,
  InvokeLinks,
  type AgreementInvoke,
  type BuyerNegotiation,
  type InvokeLink,
} from './buyer-negotiation.js';
import { boundedTaskIds, systemIds, type IdSource } from '../../shared/ids.js';
import { createA2AClient, fetchAgentCard, type A2AConnectOptions } from '../client.js';
import {
  acceptedEscrowAgents,
  connectBuyerEscrow,
  type AcceptedEscrowAgent,
  type BuyerEscrow,
  type BuyerEscrowOptions,
} from './buyer-escrow.js';
import { encodeUserMessage } from '../part-codec.js';
import { acmpPart, acmpRootOf } from './codec.js';

/** Options of {@link createAcmpBuyer}: a card or the agent's URL, and how to reach it. */
export interface AcmpBuyerConnectOptions extends A2AConnectOptions, BuyerCallPolicy {
  card?: AgentCard;
  agentUrl?: string;
  ids?: IdSource;
  /** The URI of the negotiation-session extension to look for on the card (default our URN). */
  sessionUri?: string;
  /** The escrow agent to pay through (Layer 4): the buyer then has {@link AcmpBuyer.escrow}. */
  escrow?: BuyerEscrowOptions;
}

export type { AgreementInvoke, BuyerNegotiation } from './buyer-negotiation.js';

/** A buyer connected to one provider over A2A. */
export interface AcmpBuyer
  extends Omit<AcmpBuyerCore, 'invoke' | 'stream'>, Omit<AcmpNegotiationClient, 'negotiate'> {
  /** The provider's advertised capability object (Layer 1 §1). */
  readonly capabilityObject: CapabilityObject;
  readonly card: AgentCard;
  invoke(params: InvokeInput | AgreementInvoke, options?: { signal?: AbortSignal }): Promise<AcmpResult>;
  stream(
    params: InvokeInput | AgreementInvoke,
    options?: { signal?: AbortSignal },
  ): AsyncIterable<BuyerEvent>;
  /**
   * Layer 6: quote, check the offer, accept — flat, or in a session with counters (docs/acmp-negotiation.md
   * "Buyer"); then `invoke({ agreement })` runs under it.
   * @throws AcmpError -32601 when the provider does not advertise negotiation; -33007 for a session it does
   *   not advertise; the provider's refusals.
   */
  negotiate(request: BuyerNegotiation, options?: { signal?: AbortSignal }): Promise<NegotiatedAgreement>;
  /** The escrow agents the provider accepts, with its payee id at each (its card). */
  readonly escrowAgents: readonly AcceptedEscrowAgent[];
  /** Lock, bind, release (after verifying the proof), reclaim, dispute — when `escrow` was given. */
  readonly escrow?: BuyerEscrow;
}

/**
 * Reads the provider's card first (A2A binding §2: a buyer MUST NOT rely on a feature the provider did
 * not advertise), then returns a buyer whose calls travel as ACMP data parts over the SDK's client.
 * @throws AcmpError -33007 when the card advertises no ACMP provider extension.
 */
export async function createAcmpBuyer(options: AcmpBuyerConnectOptions): Promise<AcmpBuyer> {
  const card = options.card ?? (await fetchAgentCard(requireUrl(options.agentUrl), options));
  const capabilityObject = acmpCapabilityOf(card);
  const client = await createA2AClient(card, options);
  const escrow =
    options.escrow &&
    (await connectBuyerEscrow({
      ...options.escrow,
      ids: options.escrow.ids ?? systemIds,
    }));
  return new A2AAcmpBuyer(
    { card, capabilityObject, client },
    { ...options, ids: options.ids ?? a2aTaskIds },
    escrow,
  );
}

/** The buyer {@link createAcmpBuyer} returns: the buyer core over A2A, negotiation, and escrow. */
class A2AAcmpBuyer implements AcmpBuyer {
  readonly card: AgentCard;
  readonly capabilityObject: CapabilityObject;
  readonly escrowAgents: readonly AcceptedEscrowAgent[];
  private readonly core: AcmpBuyerCore;
  private readonly links: InvokeLinks;
  private readonly negotiation: AcmpNegotiationClient;
  private readonly negotiator: AcmpBuyer['negotiate'];

  constructor(
    peer: {
      card: AgentCard;
      capabilityObject: CapabilityObject;
      client: Client;
    },
    options: AcmpBuyerConnectOptions & { ids: IdSource },
    readonly escrow: BuyerEscrow | undefined,
  ) {
    const { card, capabilityObject, client } = peer;
    const ids = options.ids;
    this.card = card;
    this.capabilityObject = capabilityObject;
    this.escrowAgents = acceptedEscrowAgents(card);
    // A2A binding §3.2: heartbeats and chunks travel only over SendStreamingMessage. Without A2A streaming on
    // the card the buyer expects neither (no stream: true, no liveness window), whatever the ACMP params say.
    const streaming = card.capabilities?.streaming === true;
    const links = new InvokeLinks(ids);
    this.links = links;
    this.core = createAcmpBuyerCore({
      capabilityObject: streaming ? capabilityObject : withoutNotifications(capabilityObject),
      transport: createA2AAcmpTransport(client, ids, {
        streaming,
        links: (taskId) => links.get(taskId),
      }),
      ids,
      retries: options.retries,
      retryDelayMs: options.retryDelayMs,
      livenessWindowMs: options.livenessWindowMs,
      ...(options.signatures ? { signatures: options.signatures } : {}),
    });
    // Layer 7 §4.1: offers and results are checked against the DID of this card (or `expectedDid`).
    const signatures = new SignatureCheck(options.signatures ?? {}, capabilityObject);
    this.negotiation = createAcmpNegotiationClient(client, { ids, signatures });
    this.negotiator = createBuyerNegotiator({
      client,
      card,
      capabilityObject,
      flat: this.negotiation,
      ids,
      signatures,
      ...(options.sessionUri ? { sessionUri: options.sessionUri } : {}),
    });
  }

  async invoke(params: InvokeInput | AgreementInvoke, o?: { signal?: AbortSignal }): Promise<AcmpResult> {
    const prepared = this.links.prepare(params);
    try {
      return await this.core.invoke(prepared, o);
    } finally {
      this.links.forget(prepared.task_id);
    }
  }

  stream(params: InvokeInput | AgreementInvoke, o?: { signal?: AbortSignal }): AsyncIterable<BuyerEvent> {
    return this.streamPrepared(this.links.prepare(params), o);
  }

  quote(...args: Parameters<AcmpNegotiationClient['quote']>): ReturnType<AcmpNegotiationClient['quote']> {
    return this.negotiation.quote(...args);
  }

  accept(...args: Parameters<AcmpNegotiationClient['accept']>): ReturnType<AcmpNegotiationClient['accept']> {
    return this.negotiation.accept(...args);
  }

  negotiate(request: BuyerNegotiation, o?: { signal?: AbortSignal }): Promise<NegotiatedAgreement> {
    return this.negotiator(request, o);
  }

  private async *streamPrepared(
    params: InvokeInput,
    o?: { signal?: AbortSignal },
  ): AsyncGenerator<BuyerEvent> {
    try {
      yield* this.core.stream(params, o);
    } finally {
      this.links.forget(params.task_id);
    }
  }
}

/**
 * The ACMP capability object a card advertises (the params of its ACMP extension entry).
 * @throws AcmpError -33007 when there is none or it does not parse.
 */
export function acmpCapabilityOf(card: AgentCard): CapabilityObject {
  // A host that is also an escrow agent lists a second ACMP entry (role "escrow-agent", L4 §1).
  // A card may list no extensions at all (a plain A2A agent, a v0.3 card).
  const extension = (card.capabilities?.extensions ?? []).find(
    (e) => e.uri === ACMP_EXTENSION_URI && e.params?.role === 'provider',
  );
  const parsed = CapabilityObjectSchema.safeParse(extension?.params);
  if (!parsed.success || parsed.data.role !== 'provider') {
    throw new AcmpError(ACMP_CODE.featureUnsupported, {
      detail: 'the agent card advertises no ACMP provider extension',
    });
  }
  return parsed.data;
}

/** Ids whose `task_…` ids every binding and store accepts (the one scheme, {@link boundedTaskIds}). */
export const a2aTaskIds: IdSource = boundedTaskIds;

/** The capability object as seen over a connection that cannot carry notifications. */
function withoutNotifications(capability: CapabilityObject): CapabilityObject {
  const features = { ...capability.features, output_streaming: false };
  delete features.heartbeat_interval_ms;
  return { ...capability, emits: [], features };
}

function requireUrl(url: string | undefined): string {
  if (!url)
    throw new AcmpError(ACMP_CODE.invalidParams, {
      detail: 'createAcmpBuyer needs a card or an agentUrl',
    });
  return url;
}

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
    // An invoke under a session agreement names the negotiation task, in its context (design §4.3 step 5).
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

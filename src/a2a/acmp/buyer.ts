import type { AgentCard } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { ACMP_EXTENSION_URI } from '../../acmp/wire/constants.js';
import { AcmpError, ACMP_CODE } from '../../acmp/wire/errors.js';
import { CapabilityObjectSchema, type CapabilityObject } from '../../acmp/wire/messages.js';
import {
  createAcmpBuyerCore,
  type AcmpBuyerCore,
  type BuyerEvent,
  type BuyerCallPolicy,
  type InvokeInput,
} from '../../acmp/buyer/buyer.js';
import type { AcmpResult } from '../../acmp/wire/task-messages.js';
import { proveIdentity, type IdentityCheckOptions } from '../../acmp/identity/prove-identity.js';
import type { VerifiedSignature } from '../../acmp/identity/verify.js';
import { SignatureCheck } from '../../acmp/buyer/signature-policy.js';
import { FirstPaymentGate, gatedBuyerCore, type PaymentGated } from '../../acmp/buyer/identity-gate.js';
import { askIdentity } from './identity-client.js';
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
} from './buyer-negotiation.js';
import { boundedTaskIds, type IdSource } from '../../shared/ids.js';
import { createA2AClient, fetchAgentCard, type A2AConnectOptions } from '../client.js';
import { acceptedEscrowAgents, type AcceptedEscrowAgent } from '../escrow-profile.js';
import { walletBuyerCore } from '../../wallet/buyer-guard.js';
import { guardNegotiation, walletNameOf } from './wallet-negotiation.js';
import type { Wallet } from '../../wallet/wallet.js';
import { createA2AAcmpTransport } from './buyer-transport.js';

/** Options of {@link createAcmpBuyer}: a card or the agent's URL, and how to reach it. */
export interface AcmpBuyerConnectOptions extends A2AConnectOptions, BuyerCallPolicy {
  card?: AgentCard;
  agentUrl?: string;
  ids?: IdSource;
  /** The URI of the negotiation-session extension to look for on the card (default our URN). */
  sessionUri?: string;
  /**
   * The operator's wallet (Layer 7 §6): every invoke passes through it, and every escrow operation of
   * an escrow composed with this buyer (docs/acmp-wallet.md, docs/acmp-escrow.md §13).
   */
  wallet?: Wallet;
}

export type { AgreementInvoke, BuyerNegotiation } from './buyer-negotiation.js';
export { createA2AAcmpTransport } from './buyer-transport.js';

/**
 * A buyer connected to one provider over A2A; `E` is the escrow it pays through, when one was composed
 * with it (docs/acmp-escrow.md §13: `createA2AAcmpBuyer` in src/connect/ gives a `BuyerEscrow`).
 */
export interface AcmpBuyer<E = unknown>
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
  /**
   * Challenges the provider (`acmp/proveIdentity`, Layer 7 §3) to prove `expectedDid` (default: its advertised DID).
   * @throws AcmpError -36001 (no DID to expect, wrong nonce, wrong DID, bad signature), -36002.
   */
  proveIdentity(options: IdentityCheckOptions): Promise<VerifiedSignature>;
  /** The escrow agents the provider accepts, with its payee id at each (its card). */
  readonly escrowAgents: readonly AcceptedEscrowAgent[];
  /** Lock, bind, release (after verifying the proof), reclaim, dispute — when an escrow was composed. */
  readonly escrow?: E;
}

/** The provider a buyer talks to: its card, the ACMP capability it advertises, and the SDK client to it. */
export interface AcmpPeer {
  readonly card: AgentCard;
  readonly capabilityObject: CapabilityObject;
  readonly client: Client;
}

/**
 * Reads the provider's card first (A2A binding §2: a buyer MUST NOT rely on a feature the provider did
 * not advertise), then opens the SDK's client to it.
 * @throws AcmpError -33007 when the card advertises no ACMP provider extension.
 */
export async function connectAcmpPeer(options: AcmpBuyerConnectOptions): Promise<AcmpPeer> {
  const card = options.card ?? (await fetchAgentCard(requireUrl(options.agentUrl), options));
  const capabilityObject = acmpCapabilityOf(card);
  const client = await createA2AClient(card, options);
  return { card, capabilityObject, client };
}

/**
 * The buyer over a connected peer, its calls travelling as ACMP data parts over the SDK's client. An
 * escrow connected by the caller (docs/acmp-escrow.md §13) is exposed as `escrow`, its paying calls
 * behind the buyer's identity gate (Layer 7 §3).
 */
export function acmpBuyerOver<E = never>(
  peer: AcmpPeer,
  options: AcmpBuyerConnectOptions,
  escrow?: PaymentGated<E>,
): AcmpBuyer<E> {
  return new A2AAcmpBuyer(peer, { ...options, ids: options.ids ?? a2aTaskIds }, escrow);
}

/**
 * A buyer of one provider over A2A, without escrow ({@link connectAcmpPeer}, then {@link acmpBuyerOver}).
 * @throws AcmpError -33007 when the card advertises no ACMP provider extension.
 */
export async function createAcmpBuyer(options: AcmpBuyerConnectOptions): Promise<AcmpBuyer<never>> {
  return acmpBuyerOver(await connectAcmpPeer(options), options);
}

/** The buyer {@link acmpBuyerOver} builds: the buyer core over A2A, negotiation, and a composed escrow. */
class A2AAcmpBuyer<E> implements AcmpBuyer<E> {
  readonly card: AgentCard;
  readonly capabilityObject: CapabilityObject;
  readonly escrowAgents: readonly AcceptedEscrowAgent[];
  private readonly core: AcmpBuyerCore;
  private readonly links: InvokeLinks;
  private readonly negotiation: AcmpNegotiationClient;
  private readonly negotiator: AcmpBuyer['negotiate'];
  private readonly ask: Parameters<typeof proveIdentity>[0];
  private readonly withWallet: (request: BuyerNegotiation) => BuyerNegotiation;
  private readonly gate: FirstPaymentGate;
  readonly escrow: E | undefined;

  constructor(
    peer: AcmpPeer,
    options: AcmpBuyerConnectOptions & { ids: IdSource },
    escrow: PaymentGated<E> | undefined,
  ) {
    const { card, capabilityObject, client } = peer;
    const ids = options.ids;
    this.ask = (params, o) => askIdentity(client, params, { ids, ...o });
    this.card = card;
    this.capabilityObject = capabilityObject;
    this.escrowAgents = acceptedEscrowAgents(card);
    // A2A binding §3.2: heartbeats and chunks travel only over SendStreamingMessage. Without A2A streaming on
    // the card the buyer expects neither (no stream: true, no liveness window), whatever the ACMP params say.
    const streaming = card.capabilities?.streaming === true;
    const links = new InvokeLinks(ids);
    this.links = links;
    const core = createAcmpBuyerCore({
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
    const { wallet } = options;
    const provider = walletNameOf(card, capabilityObject);
    // Layer 7 §4.1: offers and results are checked against the DID of this card (or `expectedDid`) before
    // the wallet sees an accept.
    const signatures = new SignatureCheck(options.signatures ?? {}, capabilityObject);
    // Layer 7 §3: the provider proves that DID before the first payment to it, before the wallet is asked.
    this.gate = new FirstPaymentGate(this.ask, {
      mode: options.identityChallenge,
      expectedDid: signatures.expectedDid,
      resolver: options.signatures?.resolver,
    });
    this.escrow = escrow?.gatedBy(this.gate);
    const paying = wallet ? walletBuyerCore(core, wallet, { counterparty: provider, ids }) : core;
    this.core = gatedBuyerCore(paying, this.gate);
    const flat = createAcmpNegotiationClient(client, { ids, signatures });
    const guarded = guardNegotiation(flat, wallet, provider);
    this.negotiation = guarded.flat;
    this.withWallet = guarded.request;
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

  async accept(
    ...args: Parameters<AcmpNegotiationClient['accept']>
  ): ReturnType<AcmpNegotiationClient['accept']> {
    await this.gate.beforePayment(args[1]);
    return this.negotiation.accept(...args);
  }

  /** A negotiation ends in an acceptance, so the provider proves its DID before the first quote. */
  async negotiate(request: BuyerNegotiation, o?: { signal?: AbortSignal }): Promise<NegotiatedAgreement> {
    await this.gate.beforePayment(o);
    return this.negotiator(this.withWallet(request), o);
  }

  async proveIdentity(options: IdentityCheckOptions): Promise<VerifiedSignature> {
    const proof = await proveIdentity(this.ask, {
      resolver: options.resolver,
      expectedDid: options.expectedDid ?? this.capabilityObject.did,
      signal: options.signal,
    });
    return this.gate.remember(proof);
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

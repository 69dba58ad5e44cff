import {
  a2aTaskIds,
  acmpCapabilityOf,
  createA2AAcmpTransport,
  createAcmpBuyer as createA2AAcmpBuyer,
  type AcmpBuyer,
} from '../a2a/acmp/buyer.js';
import type { AgentCard } from '../a2a/binding.js';
import { createA2AClient, fetchAgentCard, type A2AConnectOptions } from '../a2a/client.js';
import type {
  AcmpBuyerCore,
  AcmpBuyerTransport,
  BuyerCallPolicy,
  BuyerEvent,
  InvokeInput,
} from '../acmp/buyer/buyer.js';
import { ACMP_CODE, AcmpError } from '../acmp/wire/errors.js';
import type { CapabilityObject } from '../acmp/wire/messages.js';
import type { AcmpResult } from '../acmp/wire/task-messages.js';
import { MCP_PATH } from '../mcp/acmp-extension.js';
import { connectMcpAcmpBuyer, type McpAcmpBuyer, type McpEra } from '../mcp/buyer.js';
import { isLocalError } from '../shared/errors.js';
import type { IdSource } from '../shared/ids.js';
import type { Wallet } from '../wallet/wallet.js';

/** The bindings a provider may offer ACMP on (seed 000: MCP is the baseline, A2A additive). */
export type AcmpBindingName = 'a2a' | 'mcp';

/** Options of {@link createAcmpBuyer}. */
export interface PickAcmpBuyerOptions extends A2AConnectOptions, BuyerCallPolicy {
  /** The agent's base URL (its A2A card is at `/.well-known/agent-card.json`), or its MCP endpoint (`…/mcp`). */
  agentUrl: string;
  /** Bindings in order of preference (default `['a2a', 'mcp']`); the first one the provider offers is used. */
  prefer?: readonly AcmpBindingName[];
  /** The MCP endpoint when it is not `<agentUrl>/mcp` (this host's path). */
  mcpUrl?: string;
  /** MCP era (default `auto`: probe `server/discover`, fall back to `initialize`). */
  mcpEra?: McpEra;
  /** A card already fetched (skips the A2A discovery request). */
  card?: AgentCard;
  ids?: IdSource;
  /** The operator's wallet (Layer 7 §6): every invoke and escrow operation passes through it. */
  wallet?: Wallet;
}

/** A buyer on the binding that was picked: the same invoke/stream/cancel API whichever it is. */
export interface PickedAcmpBuyer extends AcmpBuyerCore {
  readonly binding: AcmpBindingName;
  /** The capability object the provider advertised on that binding (Layer 1 §1). */
  readonly capabilityObject: CapabilityObject;
  /** The agent card, when A2A was picked. */
  readonly card?: AgentCard;
  /** Sends `acmp/cancel` for a task (Layer 1 §3.7). */
  cancel(taskId: string, options?: { reason?: string; signal?: AbortSignal }): Promise<void>;
  /** Closes the connection (MCP); a no-op for A2A. */
  close(): Promise<void>;
}

/**
 * Discovers which bindings the provider offers ACMP on — the A2A card's extension, MCP `server/discover`
 * (or `initialize`) — in the caller's order of preference, and returns a buyer on the first one offered.
 * A refusal (bad credentials) stops the search: the other binding would refuse the same credential.
 * @throws LocalError `REFUSED`; AcmpError -33007 when no preferred binding offers ACMP; the first
 *   connection failure when a binding could not be reached at all.
 */
export async function createAcmpBuyer(options: PickAcmpBuyerOptions): Promise<PickedAcmpBuyer> {
  const prefer = options.prefer ?? ['a2a', 'mcp'];
  const failures: { binding: AcmpBindingName; error: unknown }[] = [];
  for (const binding of prefer) {
    try {
      return binding === 'a2a' ? await overA2A(options) : await overMcp(options);
    } catch (error) {
      if (isLocalError(error, 'REFUSED')) throw error;
      failures.push({ binding, error });
    }
  }
  const unreachable = failures.find((f) => !(f.error instanceof AcmpError));
  if (unreachable) throw unreachable.error;
  throw new AcmpError(ACMP_CODE.featureUnsupported, {
    detail: 'no preferred binding offers ACMP',
    tried: failures.map((f) => f.binding),
  });
}

/** The base URL and MCP endpoint an agent URL names (either may be given). */
export function agentEndpoints(agentUrl: string, mcpUrl?: string): { base: string; mcp: string } {
  const trimmed = agentUrl.replace(/\/+$/, '');
  const base = trimmed.endsWith(MCP_PATH) ? trimmed.slice(0, -MCP_PATH.length) : trimmed;
  return { base, mcp: mcpUrl ?? base + MCP_PATH };
}

async function overA2A(options: PickAcmpBuyerOptions): Promise<PickedAcmpBuyer> {
  const card = options.card ?? (await agentCard(agentEndpoints(options.agentUrl).base, options));
  offeredOn(card);
  if (options.transport && !card.supportedInterfaces.some((i) => i.protocolBinding === options.transport))
    throw new AcmpError(ACMP_CODE.featureUnsupported, {
      detail: `the agent card lists no ${options.transport} interface`,
    });
  const buyer = await createA2AAcmpBuyer({ ...options, card });
  const transport = createA2AAcmpTransport(await createA2AClient(card, options), options.ids ?? a2aTaskIds);
  return new A2APickedBuyer(card, buyer, transport);
}

/** ACMP over A2A: calls go to the A2A buyer, `acmp/cancel` over a transport of its own. */
class A2APickedBuyer implements PickedAcmpBuyer {
  readonly binding: AcmpBindingName = 'a2a';
  readonly capabilityObject: CapabilityObject;

  constructor(
    readonly card: AgentCard,
    private readonly buyer: AcmpBuyer,
    private readonly transport: AcmpBuyerTransport,
  ) {
    this.capabilityObject = buyer.capabilityObject;
  }

  invoke(input: InvokeInput, call?: { signal?: AbortSignal }): Promise<AcmpResult> {
    return this.buyer.invoke(input, call);
  }

  stream(input: InvokeInput, call?: { signal?: AbortSignal }): AsyncIterable<BuyerEvent> {
    return this.buyer.stream(input, call);
  }

  cancel(taskId: string, call?: { reason?: string; signal?: AbortSignal }): Promise<void> {
    return this.transport.cancel(
      { task_id: taskId, ...(call?.reason !== undefined ? { reason: call.reason } : {}) },
      { signal: call?.signal },
    );
  }

  /** Nothing to close: the A2A client holds no connection. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** @throws AcmpError -33007 unless the card advertises an ACMP provider (also for a card without extensions). */
function offeredOn(card: AgentCard): void {
  try {
    acmpCapabilityOf(card);
  } catch (cause) {
    throw cause instanceof AcmpError
      ? cause
      : new AcmpError(
          ACMP_CODE.featureUnsupported,
          { detail: 'the agent card advertises no ACMP provider extension' },
          { cause },
        );
  }
}

/**
 * The agent card at `base`. A server that answers without a card offers no A2A (-33007); a failed fetch
 * (fetch's `TypeError`: connection refused, TLS) is reported as is.
 */
async function agentCard(base: string, options: A2AConnectOptions): Promise<AgentCard> {
  try {
    return await fetchAgentCard(base, options);
  } catch (error) {
    if (error instanceof TypeError) throw error;
    throw new AcmpError(
      ACMP_CODE.featureUnsupported,
      { detail: 'no A2A agent card at this URL' },
      { cause: error },
    );
  }
}

async function overMcp(options: PickAcmpBuyerOptions): Promise<PickedAcmpBuyer> {
  const token = options.token ?? options.auth?.token;
  const buyer = await connectMcpAcmpBuyer({
    endpoint: { url: agentEndpoints(options.agentUrl, options.mcpUrl).mcp },
    ...(token !== undefined ? { token } : {}),
    ...(options.signer !== undefined ? { signer: options.signer } : {}),
    ...(options.audience !== undefined ? { audience: options.audience } : {}),
    ...(options.caCert !== undefined ? { caCert: options.caCert } : {}),
    ...(options.mcpEra !== undefined ? { era: options.mcpEra } : {}),
    ...(options.ids !== undefined ? { ids: options.ids } : {}),
    ...(options.wallet !== undefined ? { wallet: options.wallet } : {}),
    retries: options.retries,
    retryDelayMs: options.retryDelayMs,
    livenessWindowMs: options.livenessWindowMs,
    ...(options.signatures !== undefined ? { signatures: options.signatures } : {}),
    ...(options.identityChallenge !== undefined ? { identityChallenge: options.identityChallenge } : {}),
  });
  return new McpPickedBuyer(buyer);
}

/** ACMP over MCP: the MCP buyer, delegated to (not spread, so its methods stay bound to it). */
class McpPickedBuyer implements PickedAcmpBuyer {
  readonly binding: AcmpBindingName = 'mcp';
  readonly capabilityObject: CapabilityObject;
  /** The era the connection speaks. */
  readonly era: McpAcmpBuyer['era'];

  constructor(private readonly buyer: McpAcmpBuyer) {
    this.capabilityObject = buyer.capabilityObject;
    this.era = buyer.era;
  }

  invoke(input: InvokeInput, call?: { signal?: AbortSignal }): Promise<AcmpResult> {
    return this.buyer.invoke(input, call);
  }

  stream(input: InvokeInput, call?: { signal?: AbortSignal }): AsyncIterable<BuyerEvent> {
    return this.buyer.stream(input, call);
  }

  cancel(taskId: string, call?: { reason?: string; signal?: AbortSignal }): Promise<void> {
    return this.buyer.cancel(taskId, call);
  }

  close(): Promise<void> {
    return this.buyer.close();
  }
}

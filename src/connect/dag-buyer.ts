import type { DagBuyerPort, DagProvider } from '../acmp/dag/dag-ports.js';
import type { DagBinding } from '../acmp/dag/dag-model.js';
import { createAcmpBuyer, type PickAcmpBuyerOptions, type PickedAcmpBuyer } from './acmp-buyer.js';

/** Options of {@link ConnectDagBuyerPort}: how every provider of a run is reached (all but the URL). */
export type DagConnectOptions = Omit<PickAcmpBuyerOptions, 'agentUrl' | 'card'>;

/**
 * What a task's `binding` asks of the buyer (docs/acmp-dag.md "The DAG file"): `MCP` the MCP endpoint
 * only; an A2A transport the card's interface of that `protocolBinding` only. Naming one never falls
 * back to another: a plan that says gRPC is not bought over JSON-RPC.
 */
function pickOf(binding: DagBinding | undefined): Pick<PickAcmpBuyerOptions, 'prefer' | 'transport'> {
  if (binding === undefined) return {};
  if (binding === 'MCP') return { prefer: ['mcp'] };
  return { prefer: ['a2a'], transport: binding };
}

/**
 * The DAG runner's buyer port over our real bindings: each provider URL and binding gets one buyer,
 * picked the way `acmp invoke` picks one (without a binding: the A2A card over its preferred transport,
 * else MCP; src/connect/acmp-buyer.ts), with the operator's wallet when one is given, so every node's
 * spend passes its limits (Layer 7 §6.2).
 */
export class ConnectDagBuyerPort implements DagBuyerPort {
  private readonly buyers = new Map<string, Promise<PickedAcmpBuyer>>();

  constructor(private readonly options: DagConnectOptions = {}) {}

  async provider(
    agentUrl: string,
    call?: { signal?: AbortSignal; binding?: DagBinding },
  ): Promise<DagProvider> {
    call?.signal?.throwIfAborted();
    const key = `${call?.binding ?? '*'} ${agentUrl}`;
    let buyer = this.buyers.get(key);
    if (!buyer) {
      buyer = createAcmpBuyer({ ...this.options, ...pickOf(call?.binding), agentUrl });
      this.buyers.set(key, buyer);
      // A failed connection is not kept: the next run may reach the provider.
      buyer.catch(() => this.buyers.delete(key));
    }
    const picked = await buyer;
    return {
      capabilityObject: picked.capabilityObject,
      stream: (params, options) => picked.stream(params, options),
    };
  }

  async close(): Promise<void> {
    const buyers = [...this.buyers.values()];
    this.buyers.clear();
    await Promise.allSettled(buyers.map(async (b) => (await b).close()));
  }
}

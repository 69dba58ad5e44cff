import type { DagBuyerPort, DagProvider } from '../acmp/dag/dag-ports.js';
import { createAcmpBuyer, type PickAcmpBuyerOptions, type PickedAcmpBuyer } from './acmp-buyer.js';

/** Options of {@link ConnectDagBuyerPort}: how every provider of a run is reached (all but the URL). */
export type DagConnectOptions = Omit<PickAcmpBuyerOptions, 'agentUrl' | 'card'>;

/**
 * The DAG runner's buyer port over our real bindings: each provider URL gets one buyer, picked the way
 * `acmp invoke` picks one (the A2A card over JSON-RPC, HTTP+JSON or gRPC as the card prefers, else MCP;
 * src/connect/acmp-buyer.ts), with the operator's wallet when one is given, so every node's spend passes
 * its limits (Layer 7 §6.2).
 */
export class ConnectDagBuyerPort implements DagBuyerPort {
  private readonly buyers = new Map<string, Promise<PickedAcmpBuyer>>();

  constructor(private readonly options: DagConnectOptions = {}) {}

  async provider(agentUrl: string, call?: { signal?: AbortSignal }): Promise<DagProvider> {
    call?.signal?.throwIfAborted();
    let buyer = this.buyers.get(agentUrl);
    if (!buyer) {
      buyer = createAcmpBuyer({ ...this.options, agentUrl });
      this.buyers.set(agentUrl, buyer);
      // A failed connection is not kept: the next run may reach the provider.
      buyer.catch(() => this.buyers.delete(agentUrl));
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

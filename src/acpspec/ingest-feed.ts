import { ANONYMOUS_IDENTITY } from '../shared/identity.js';
import type { AcpAck } from './envelope.js';
import type { AcpReceiver, CallerContext, IngestContext } from './receiver.js';

/** One envelope a receiver accepted: its ack and the transaction's owner (the caller that sent it). */
export interface AcceptedEnvelope {
  readonly ack: AcpAck;
  /** Only the owner may extend a transaction, so the sender of an accepted envelope is its owner. */
  readonly owner: string;
}

/**
 * The envelopes one receiver accepted, in acceptance order, for followers inside the process (the MCP
 * binding's resource subscriptions, docs/acpspec-mcp.md "Subscriptions"). A listener that throws does not
 * stop the others or the ingest: it is the follower's fault, not the sender's.
 */
export class IngestFeed {
  private readonly listeners = new Set<(accepted: AcceptedEnvelope) => void>();

  /** Registers a listener; returns its (idempotent) removal. */
  subscribe(listener: (accepted: AcceptedEnvelope) => void): () => void {
    const own = (accepted: AcceptedEnvelope): void => listener(accepted);
    this.listeners.add(own);
    return () => void this.listeners.delete(own);
  }

  publish(accepted: AcceptedEnvelope): void {
    for (const listener of this.listeners) {
      try {
        listener(accepted);
      } catch {
        // A follower's failure is its own; the envelope is accepted and acknowledged regardless.
      }
    }
  }

  /** The number of listeners (for tests: a closed follower leaves none behind). */
  get size(): number {
    return this.listeners.size;
  }
}

/**
 * A receiver that tells `feed` of every envelope `inner` acknowledged — after the commit, so a follower
 * reading the state then sees it. Every binding is handed this one receiver, so an envelope accepted over
 * A2A, HTTPS or MCP is published alike. An idempotent replay is acknowledged again, and published again.
 */
export class ObservedReceiver implements AcpReceiver {
  constructor(
    private readonly inner: AcpReceiver,
    private readonly feed: IngestFeed,
  ) {}

  async ingest(envelope: unknown, context: IngestContext): Promise<AcpAck> {
    const ack = await this.inner.ingest(envelope, context);
    this.feed.publish({ ack, owner: context.caller ?? ANONYMOUS_IDENTITY });
    return ack;
  }

  state(transactionId: string, options?: CallerContext): ReturnType<AcpReceiver['state']> {
    return this.inner.state(transactionId, options);
  }

  transactions(
    options?: Parameters<AcpReceiver['transactions']>[0],
  ): ReturnType<AcpReceiver['transactions']> {
    return this.inner.transactions(options);
  }

  events(
    transactionId: string,
    options?: Parameters<AcpReceiver['events']>[1],
  ): ReturnType<AcpReceiver['events']> {
    return this.inner.events(transactionId, options);
  }

  follow(
    transactionId: string,
    options: Parameters<AcpReceiver['follow']>[1],
  ): ReturnType<AcpReceiver['follow']> {
    return this.inner.follow(transactionId, options);
  }
}

import type { McpServer, ServerCapabilities, ServerEvent } from '@modelcontextprotocol/server';
import {
  ACP_MCP_EXTENSION_ID,
  ACP_MCP_URIS,
  ACP_SCHEMA_PATH,
  ACP_VERSION,
  type Kind,
} from '../../acpspec/constants.js';
import type { IngestFeed } from '../../acpspec/ingest-feed.js';
import type { AcpReceiver } from '../../acpspec/receiver.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import type { McpCall, McpContribution } from '../contribution.js';
import { registerContextPrompt } from './prompt.js';
import { AcpResources } from './resources.js';
import { AcpTools } from './tools.js';

/** Options of {@link createAcpMcpContribution}. */
export interface AcpMcpOptions {
  /** THE receiver every binding uses (wrapped so that `feed` learns of each accepted envelope). */
  receiver: AcpReceiver;
  feed: IngestFeed;
  accepts: readonly Kind[];
  emits: readonly Kind[];
  /** Whether the host's HTTP interface is TLS; stdio is a local pipe and counts as secure. */
  secure: boolean;
  /** The host's public base URL ('' when it has none, as on stdio), for the absolute `schema_url`. */
  baseUrl: () => string;
  /** The role of an MCP caller's envelopes when it names no producer (default `mcp_agent`). */
  producerRole?: string;
  clock?: Clock;
  logger?: Logger;
}

/**
 * ACPspec over MCP (docs/acpspec-mcp.md): the host's MCP server gains, for each caller, its transactions
 * as resources, the write and read tools and the context prompt, and advertises the binding as the
 * `org.acpspec/mcp` extension with the card's four values (seed 001 "Declaring Support").
 */
export function createAcpMcpContribution(options: AcpMcpOptions): McpContribution {
  return new AcpMcpContribution(options);
}

class AcpMcpContribution implements McpContribution {
  readonly instructions =
    'ACPspec transaction state (extension org.acpspec/mcp): read acp://transactions/{id} resources or ' +
    'acp_request_state, change state with acp_apply_delta or acp_submit_snapshot; the ' +
    'acp_transaction_context prompt states the consent rules.';
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(private readonly options: AcpMcpOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
  }

  capabilities(serving: Omit<McpCall, 'caller'>): ServerCapabilities {
    const base = this.options.baseUrl();
    return {
      // A 2025-era client over HTTP is served statelessly, one instance per POST: a subscription could
      // never be delivered, so it is not offered (docs/acpspec-mcp.md "Subscriptions").
      resources: { subscribe: serving.era === 'modern' || serving.transport === 'stdio', listChanged: false },
      tools: { listChanged: false },
      prompts: { listChanged: false },
      extensions: {
        [ACP_MCP_EXTENSION_ID]: {
          acp_version: ACP_VERSION,
          // Resolvable as the card's: over HTTP the host's URL; over stdio, where there is none, the resource.
          schema_url: base === '' ? ACP_MCP_URIS.schema : base + ACP_SCHEMA_PATH,
          schema_resource: ACP_MCP_URIS.schema,
          accepts: [...this.options.accepts],
          emits: [...this.options.emits],
        },
      },
    };
  }

  register(mcp: McpServer, call: McpCall): void {
    const { receiver, feed } = this.options;
    new AcpResources({ receiver, feed, logger: this.logger }, call).register(mcp);
    new AcpTools(
      {
        receiver,
        // Personal data only over TLS (seed "The Conformance Rule"); stdio never leaves the machine.
        secure: call.transport === 'stdio' || this.options.secure,
        producerRole: this.options.producerRole ?? 'mcp_agent',
        clock: this.clock,
        logger: this.logger,
      },
      call,
    ).register(mcp);
    registerContextPrompt(mcp, { receiver, call });
  }

  connectHttp(publish: (owner: string, event: ServerEvent) => void): () => void {
    return this.options.feed.subscribe(({ ack, owner }) =>
      publish(owner, { kind: 'resource_updated', uri: ACP_MCP_URIS.transaction(ack.transaction_id) }),
    );
  }
}

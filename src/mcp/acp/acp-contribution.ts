import type { McpServer, ServerCapabilities, ServerEvent } from '@modelcontextprotocol/server';
import {
  ACP_MCP_EXTENSION_ID,
  ACP_MCP_URIS,
  ACP_SCHEMA_PATH,
  ACP_VERSION,
  type Kind,
} from '../../acpspec/constants.js';
import type { AcpReceiver } from '../../acpspec/receiver.js';
import type { TransactionStore } from '../../acpspec/transaction-store.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import type { McpCall, McpContribution } from '../contribution.js';
import { registerContextPrompt } from './prompt.js';
import { AcpResources } from './resources.js';
import { AcpTools } from './tools.js';

/** Options of {@link createAcpMcpContribution}. */
export interface AcpMcpOptions {
  /** THE receiver every binding uses. */
  receiver: AcpReceiver;
  /**
   * The commits of the receiver's store: on PostgreSQL those of every host sharing it (docs/acpspec-mcp.md
   * "Subscriptions"), elsewhere this process's.
   */
  commits: Pick<TransactionStore, 'watchCommits'>;
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
      // A 2025-era client over HTTP is served statelessly, one instance per POST: neither an update nor a
      // list change could ever be delivered, so neither is offered (docs/acpspec-mcp.md "Subscriptions").
      resources: { subscribe: delivered(serving), listChanged: delivered(serving) },
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
    const { receiver, commits } = this.options;
    new AcpResources({ receiver, commits, logger: this.logger }, call).register(mcp);
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

  /** Resources (with subscriptions on stdio), tools and the prompt: MCP's own namespaces for them. */
  serves(method: string): boolean {
    return ACP_MCP_NAMESPACES.some((namespace) => method.startsWith(namespace));
  }

  connectHttp(publish: (owner: string, event: ServerEvent) => void): () => void {
    return this.options.commits.watchCommits(({ transactionId, owner, version }) => {
      // A commit that created the transaction changed its owner's list (it is now listed).
      if (version === 1) publish(owner, { kind: 'resources_list_changed' });
      publish(owner, { kind: 'resource_updated', uri: ACP_MCP_URIS.transaction(transactionId) });
    });
  }
}

/** The method namespaces of the handlers `register` installs (resources, tools, the prompt and its completion). */
const ACP_MCP_NAMESPACES = ['resources/', 'tools/', 'prompts/', 'completion/'] as const;

/** Whether change notifications reach this kind of instance (not a stateless 2025-era HTTP one). */
function delivered(serving: Omit<McpCall, 'caller'>): boolean {
  return serving.era === 'modern' || serving.transport === 'stdio';
}

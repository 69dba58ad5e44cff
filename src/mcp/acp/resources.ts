import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  type McpServer,
  type ReadResourceResult,
  type Resource,
} from '@modelcontextprotocol/server';
import { ACP_MCP_URIS, ACP_MEDIA_TYPE } from '../../acpspec/constants.js';
import { isAcpError, isAcpId } from '../../acpspec/errors.js';
import type { AcpReceiver } from '../../acpspec/receiver.js';
import type { TransactionStore } from '../../acpspec/transaction-store.js';
import { ACP_SCHEMA_TEXT } from '../../acpspec/schema.js';
import { errorFields, type Logger } from '../../shared/logger.js';
import type { McpCall } from '../contribution.js';

/** Entries of one `resources/list` page (docs/acpspec-mcp.md "Resources"). */
export const RESOURCE_PAGE_SIZE = 100;

const TRANSACTION_URI = /^acp:\/\/transactions\/([^/?#]+)$/;
const SCHEMA_MEDIA_TYPE = 'application/schema+json';

/** What the resource handlers of one instance read from. */
export interface AcpResourceDeps {
  receiver: AcpReceiver;
  /** The commits of the receiver's store (every host's on PostgreSQL). */
  commits: Pick<TransactionStore, 'watchCommits'>;
  logger: Logger;
}

/** The transaction id a resource URI names, or undefined when it names none (`acp://transactions/{id}`). */
function transactionOfUri(uri: string): string | undefined {
  const match = TRANSACTION_URI.exec(uri);
  if (!match?.[1]) return undefined;
  try {
    const id = decodeURIComponent(match[1]);
    return isAcpId(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The ACPspec resources of one MCP server instance (docs/acpspec-mcp.md "Resources", "Subscriptions"):
 * each transaction the caller owns is `acp://transactions/{id}` whose contents are the state snapshot's
 * canonical bytes (the very bytes of the A2A and HTTPS bindings), listed in pages of
 * {@link RESOURCE_PAGE_SIZE}; the envelope schema is `acp://schemas/0.1/envelope.schema.json`.
 * Another caller's transaction is not found, exactly as one that does not exist.
 */
export class AcpResources {
  /** 2025-era stdio: the URIs this connection subscribed to (`resources/subscribe`). */
  private readonly subscribed = new Set<string>();

  constructor(
    private readonly deps: AcpResourceDeps,
    private readonly call: McpCall,
  ) {}

  register(mcp: McpServer): void {
    const server = mcp.server;
    server.setRequestHandler('resources/list', (request) => this.list(request.params?.cursor));
    server.setRequestHandler('resources/templates/list', () =>
      Promise.resolve({
        resourceTemplates: [
          {
            uriTemplate: ACP_MCP_URIS.transactionTemplate,
            name: 'acp-transaction',
            title: 'ACPspec transaction state',
            description:
              "A transaction's current state snapshot envelope (canonical JSON, the same bytes as over A2A and HTTPS)",
            mimeType: ACP_MEDIA_TYPE,
          },
        ],
      }),
    );
    server.setRequestHandler('resources/read', (request) => this.read(request.params.uri));
    if (this.call.transport === 'stdio') this.followOnStdio(mcp);
  }

  /** Pages of the caller's transactions after the cursor; the schema heads the first page. */
  private async list(cursor: string | undefined): Promise<{ resources: Resource[]; nextCursor?: string }> {
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const page = await this.guard(() =>
      this.deps.receiver.transactions({
        caller: this.call.caller,
        limit: RESOURCE_PAGE_SIZE,
        ...(after === undefined ? {} : { after }),
      }),
    );
    const resources: Resource[] = page.transactions.map((t) => ({
      uri: ACP_MCP_URIS.transaction(t.transactionId),
      name: t.transactionId,
      title: `ACPspec transaction ${t.transactionId}`,
      mimeType: ACP_MEDIA_TYPE,
      annotations: { lastModified: t.stateProducedAt },
    }));
    if (cursor === undefined) resources.unshift(schemaResource());
    return { resources, ...(page.next === undefined ? {} : { nextCursor: encodeCursor(page.next) }) };
  }

  private async read(uri: string): Promise<ReadResourceResult> {
    if (uri === ACP_MCP_URIS.schema)
      return { contents: [{ uri, mimeType: SCHEMA_MEDIA_TYPE, text: ACP_SCHEMA_TEXT }] };
    const transactionId = transactionOfUri(uri);
    if (transactionId === undefined) throw new ResourceNotFoundError(uri);
    const { bytes } = await this.guard(
      () => this.deps.receiver.state(transactionId, { caller: this.call.caller }),
      uri,
    );
    return { contents: [{ uri, mimeType: ACP_MEDIA_TYPE, text: bytes.toString('utf8') }] };
  }

  /**
   * stdio: the connection outlives a request, so this instance follows the store's commits and sends
   * `notifications/resources/updated` for each envelope accepted into one of the caller's transactions,
   * and `notifications/resources/list_changed` when one created a transaction of the caller — on
   * 2026-07-28 the entry delivers them on the `subscriptions/listen` streams whose filter asks for them; on
   * the 2025 era updates only for URIs this connection subscribed to. The follower ends with the instance.
   */
  private followOnStdio(mcp: McpServer): void {
    const server = mcp.server;
    if (this.call.era === 'legacy') {
      server.setRequestHandler('resources/subscribe', (request) => {
        this.subscribed.add(subscribable(request.params.uri));
        return Promise.resolve({});
      });
      server.setRequestHandler('resources/unsubscribe', (request) => {
        this.subscribed.delete(request.params.uri);
        return Promise.resolve({});
      });
    }
    const stop = this.deps.commits.watchCommits(({ transactionId, owner, version }) => {
      if (owner !== this.call.caller) return;
      if (version === 1) server.sendResourceListChanged().catch(() => undefined);
      const uri = ACP_MCP_URIS.transaction(transactionId);
      if (this.call.era === 'legacy' && !this.subscribed.has(uri)) return;
      server.sendResourceUpdated({ uri }).catch(() => undefined);
    });
    const previous = server.onclose;
    server.onclose = () => {
      stop();
      previous?.();
    };
  }

  /** A read of the receiver; an unknown transaction is resource-not-found, anything else an internal error. */
  private async guard<T>(read: () => Promise<T>, uri?: string): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (uri !== undefined && isAcpError(error, 'ACP_TRANSACTION_UNKNOWN'))
        throw new ResourceNotFoundError(uri);
      this.deps.logger.error('acp.mcp.resource_failed', errorFields(error));
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'internal error');
    }
  }
}

function schemaResource(): Resource {
  return {
    uri: ACP_MCP_URIS.schema,
    name: 'acpspec-envelope-schema',
    title: 'ACPspec envelope JSON Schema (0.1)',
    mimeType: SCHEMA_MEDIA_TYPE,
  };
}

/**
 * The URI of a `resources/subscribe`: a transaction URI (held or not yet: the caller is told when its
 * envelope creates it). Another caller's transaction may be named and is never reported.
 * @throws ProtocolError -32602 for any other URI.
 */
function subscribable(uri: string): string {
  if (transactionOfUri(uri) === undefined)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      'only acp://transactions/{id} can be subscribed to',
    );
  return uri;
}

/** An opaque cursor: the last transaction id of the page, base64url. */
function encodeCursor(transactionId: string): string {
  return Buffer.from(transactionId, 'utf8').toString('base64url');
}

/** @throws ProtocolError -32602 for a cursor this server did not issue. */
function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!isAcpId(id) || encodeCursor(id) !== cursor)
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'invalid cursor');
  return id;
}

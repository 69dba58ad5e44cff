import {
  Client,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type Transport,
} from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createAcmpBuyerCore, type AcmpBuyerCore, type BuyerCallPolicy } from '../acmp/buyer.js';
import { ACMP_CODE, AcmpError } from '../acmp/errors.js';
import type { CapabilityObject } from '../acmp/messages.js';
import { LocalError } from '../shared/errors.js';
import { fetchTrusting } from '../shared/fetch.js';
import { boundedTaskIds, type IdSource } from '../shared/ids.js';
import { acmpCapabilityOfMcp, MCP_PROTOCOL_VERSION } from './acmp-extension.js';
import { createMcpAcmpTransport, InvokeStreamWatch } from './buyer-transport.js';

/** How to reach an MCP server: its Streamable HTTP endpoint, or a command to run over stdio. */
export type McpEndpoint =
  | { readonly url: string }
  | {
      readonly command: string;
      readonly args?: readonly string[];
      readonly env?: Record<string, string>;
      readonly cwd?: string;
    };

/** Which MCP era the buyer speaks: probe `server/discover` and fall back (`auto`), 2026-07-28 only, or 2025's `initialize`. */
export type McpEra = 'auto' | 'modern' | 'legacy';

/** Options of {@link connectMcpAcmpBuyer}. */
export interface McpBuyerConnectOptions extends BuyerCallPolicy {
  endpoint: McpEndpoint;
  /** Bearer token (Layer 1 §5.1): the `Authorization` header over HTTP, `A2AC_TOKEN` in a stdio child's environment. */
  token?: string;
  /** Extra trusted CA certificate (PEM), e.g. the host's self-signed localhost certificate. */
  caCert?: string;
  /** Default `auto`. */
  era?: McpEra;
  ids?: IdSource;
}

/** A buyer connected to one ACMP provider over MCP. */
export interface McpAcmpBuyer extends AcmpBuyerCore {
  /** The capability object the server advertised (`org.a2agora/acmp`, Layer 1 §1). */
  readonly capabilityObject: CapabilityObject;
  /** The era the connection speaks. */
  readonly era: 'modern' | 'legacy';
  /** Sends `acmp/cancel` for a task (Layer 1 §3.7). */
  cancel(taskId: string, options?: { reason?: string; signal?: AbortSignal }): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects with the official MCP client, reads the server's capabilities (`server/discover`, or
 * `initialize` for a 2025-era server) and returns a buyer that relies only on what the ACMP extension
 * advertises there (Layer 1 §1).
 * @throws AcmpError -33007 when there is no MCP server there (HTTP 4xx, no era in common) or it advertises
 *   no ACMP provider; LocalError `REFUSED` for HTTP 401/403; other connection failures as the SDK reports them.
 */
export async function connectMcpAcmpBuyer(options: McpBuyerConnectOptions): Promise<McpAcmpBuyer> {
  const era = options.era ?? 'auto';
  const client = new Client(
    { name: 'a2a-commerce', version: '0.1.0' },
    era === 'legacy'
      ? {}
      : { versionNegotiation: { mode: era === 'auto' ? 'auto' : { pin: MCP_PROTOCOL_VERSION } } },
  );
  const watch = new InvokeStreamWatch();
  const transport = createMcpAcmpTransport(client, { streamEnds: watch });
  try {
    await client.connect(clientTransport(options, watch));
  } catch (error) {
    throw connectFailure(error);
  }
  let capabilityObject: CapabilityObject;
  let core: AcmpBuyerCore;
  try {
    capabilityObject = acmpCapabilityOfMcp(client.getServerCapabilities());
    core = createAcmpBuyerCore({
      capabilityObject,
      transport,
      ids: options.ids ?? boundedTaskIds,
      retries: options.retries,
      retryDelayMs: options.retryDelayMs,
      livenessWindowMs: options.livenessWindowMs,
      ...(options.signatures ? { signatures: options.signatures } : {}),
    });
  } catch (error) {
    // Nothing stays open when the server offers no ACMP or the buyer's options are refused.
    await client.close();
    throw error;
  }
  return {
    capabilityObject,
    era: client.getProtocolEra() === 'modern' ? 'modern' : 'legacy',
    invoke: core.invoke.bind(core),
    stream: core.stream.bind(core),
    cancel: (taskId, callOptions) =>
      transport.cancel(
        { task_id: taskId, ...(callOptions?.reason !== undefined ? { reason: callOptions.reason } : {}) },
        { signal: callOptions?.signal },
      ),
    close: () => client.close(),
  };
}

function clientTransport(options: McpBuyerConnectOptions, watch: InvokeStreamWatch): Transport {
  const { endpoint, token } = options;
  if ('url' in endpoint) {
    return new StreamableHTTPClientTransport(new URL(endpoint.url), {
      fetch: watch.wrap(fetchTrusting(options.caCert)),
      ...(token !== undefined ? { authProvider: { token: () => Promise.resolve(token) } } : {}),
    });
  }
  // Layer 1 §5.1: over stdio the token travels in the server's environment.
  const env = {
    ...getDefaultEnvironment(),
    ...endpoint.env,
    ...(token !== undefined ? { A2AC_TOKEN: token } : {}),
  };
  return new StdioClientTransport({
    command: endpoint.command,
    args: [...(endpoint.args ?? [])],
    env,
    ...(endpoint.cwd !== undefined ? { cwd: endpoint.cwd } : {}),
    stderr: 'ignore',
  });
}

/**
 * Authentication failures are refusals (retrying cannot help); an endpoint that is no MCP server we can
 * speak to offers no ACMP over MCP (-33007); anything else (connection refused) is reported as is.
 */
function connectFailure(error: unknown): unknown {
  if (
    error instanceof UnauthorizedError ||
    (error instanceof SdkHttpError && (error.status === 401 || error.status === 403))
  ) {
    return new LocalError('REFUSED', 'the MCP server refused the credentials', { cause: error });
  }
  if (
    (error instanceof SdkHttpError && error.status >= 400 && error.status < 500) ||
    (error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed)
  ) {
    return new AcmpError(
      ACMP_CODE.featureUnsupported,
      { detail: 'no MCP server speaking ACMP at this endpoint' },
      { cause: error },
    );
  }
  return error;
}

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
import { createAcmpBuyerCore, type AcmpBuyerCore, type BuyerCallPolicy } from '../acmp/buyer/buyer.js';
import { ACMP_CODE, AcmpError } from '../acmp/wire/errors.js';
import { L6_METHOD } from '../acmp/wire/constants.js';
import { mintCallerToken, type Signer } from '../acmp/identity/index.js';
import type { CapabilityObject } from '../acmp/wire/messages.js';
import {
  AckSchema,
  OfferSchema,
  type AcceptParams,
  type Ack,
  type Offer,
  type OfferRequestParams,
} from '../acmp/wire/negotiation-messages.js';
import { LocalError } from '../shared/errors.js';
import { fetchTrusting } from '../shared/fetch.js';
import { boundedTaskIds, type IdSource } from '../shared/ids.js';
import { L7_METHOD } from '../acmp/wire/constants.js';
import { SignatureCheck } from '../acmp/buyer/signature-policy.js';
import { proveIdentity, type IdentityCheckOptions } from '../acmp/identity/prove-identity.js';
import { FirstPaymentGate, gatedBuyerCore, type AskIdentity } from '../acmp/buyer/identity-gate.js';
import type { VerifiedSignature } from '../acmp/identity/verify.js';
import { acmpCapabilityOfMcp, MCP_PROTOCOL_VERSION } from './acmp-extension.js';
import {
  classify,
  createMcpAcmpTransport,
  InvokeStreamWatch,
  requestNegotiation,
} from './buyer-transport.js';
import { z } from 'zod';
import { walletOfferCalls, type OfferCalls } from '../wallet/accept-guard.js';
import { walletBuyerCore } from '../wallet/buyer-guard.js';
import type { Wallet } from '../wallet/wallet.js';

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
  /**
   * Identify by DID over HTTP: each request carries a fresh caller token signed by this signer
   * (docs/acmp-identity.md "Callers identified by DID"). A `token` wins; stdio has no use for it.
   */
  signer?: Signer;
  /** The caller tokens' `aud` (default: the origin of the endpoint URL, the host's base URL). */
  audience?: string;
  /** Extra trusted CA certificate (PEM), e.g. the host's self-signed localhost certificate. */
  caCert?: string;
  /** Default `auto`. */
  era?: McpEra;
  ids?: IdSource;
  /** The operator's wallet: every invoke and accept passes through it (docs/acmp-wallet.md). */
  wallet?: Wallet;
}

/** A buyer connected to one ACMP provider over MCP. */
export interface McpAcmpBuyer extends AcmpBuyerCore {
  /** The capability object the server advertised (`org.a2agora/acmp`, Layer 1 §1). */
  readonly capabilityObject: CapabilityObject;
  /** The era the connection speaks. */
  readonly era: 'modern' | 'legacy';
  /**
   * Challenges the provider with `acmp/proveIdentity` (Layer 7 §3) and checks the answer against
   * `expectedDid` (default: the DID its capability object advertises).
   * @throws AcmpError -36001 (no DID to expect, wrong nonce, wrong DID, bad signature), -36002.
   */
  proveIdentity(options: IdentityCheckOptions): Promise<VerifiedSignature>;
  /** Sends `acmp/cancel` for a task (Layer 1 §3.7). */
  cancel(taskId: string, options?: { reason?: string; signal?: AbortSignal }): Promise<void>;
  /**
   * `acmp/offerRequest` (L6 §2.1), for a provider that lists it in `accepts`; the offer's `offer_id` goes
   * into `acmp/accept` and then into the invoke's params (docs/acmp-negotiation.md).
   * @throws AcmpError the provider's refusal (-33001, -33002, -33006, -32602, -32601 when not served).
   */
  quote(params: OfferRequestParams, options?: { signal?: AbortSignal }): Promise<Offer>;
  /**
   * `acmp/accept` (L6 §2.2).
   * @throws AcmpError -34001, -34002, -34003, -33005 `escrow_committed`.
   */
  accept(params: AcceptParams, options?: { signal?: AbortSignal }): Promise<Ack>;
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
  let signatures: SignatureCheck;
  try {
    capabilityObject = acmpCapabilityOfMcp(client.getServerCapabilities());
    // Layer 7 §4.1: offers are checked against the advertised DID (or `expectedDid`), as results are.
    signatures = new SignatureCheck(options.signatures ?? {}, capabilityObject);
    const ids = options.ids ?? boundedTaskIds;
    core = createAcmpBuyerCore({
      capabilityObject,
      transport,
      ids,
      retries: options.retries,
      retryDelayMs: options.retryDelayMs,
      livenessWindowMs: options.livenessWindowMs,
      ...(options.signatures ? { signatures: options.signatures } : {}),
    });
    if (options.wallet)
      core = walletBuyerCore(core, options.wallet, {
        counterparty: providerOf(options, capabilityObject),
        ids,
      });
  } catch (error) {
    // Nothing stays open when the server offers no ACMP or the buyer's options are refused.
    await client.close();
    throw error;
  }
  const ask: AskIdentity = (params, o) =>
    client.request({ method: L7_METHOD.proveIdentity, params }, RawResult, o).catch((error: unknown) => {
      throw classify(error);
    });
  let gate: FirstPaymentGate;
  try {
    // Layer 7 §3: the provider proves its DID before the first payment to it, before the wallet is asked.
    gate = new FirstPaymentGate(ask, {
      mode: options.identityChallenge,
      expectedDid: signatures.expectedDid,
      resolver: options.signatures?.resolver,
    });
  } catch (error) {
    await client.close();
    throw error;
  }
  core = gatedBuyerCore(core, gate);
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
    proveIdentity: async (check) =>
      gate.remember(
        await proveIdentity(ask, {
          resolver: check.resolver,
          expectedDid: check.expectedDid ?? capabilityObject.did,
          signal: check.signal,
        }),
      ),
    ...offerCalls(client, options, { capabilityObject, signatures, gate }),
    close: () => client.close(),
  };
}

/** `acmp/offerRequest` and `acmp/accept` over MCP, through the wallet when there is one. */
function offerCalls(
  client: Client,
  options: McpBuyerConnectOptions,
  peer: { capabilityObject: CapabilityObject; signatures: SignatureCheck; gate: FirstPaymentGate },
): OfferCalls {
  const { capabilityObject, signatures, gate } = peer;
  const calls: OfferCalls = {
    quote: async (params, callOptions) => {
      const offer = await requestNegotiation(
        client,
        { method: L6_METHOD.offerRequest, params, schema: OfferSchema },
        callOptions,
      );
      await signatures.check(offer, callOptions?.signal ? { signal: callOptions.signal } : {});
      return offer;
    },
    accept: (params, callOptions) =>
      requestNegotiation(client, { method: L6_METHOD.accept, params, schema: AckSchema }, callOptions),
  };
  const paying = options.wallet
    ? walletOfferCalls(calls, options.wallet, providerOf(options, capabilityObject))
    : calls;
  return {
    quote: (params, o) => paying.quote(params, o),
    async accept(params, o) {
      await gate.beforePayment(o);
      return paying.accept(params, o);
    },
  };
}

/** The provider as the wallet names it: its advertised `provider_id` (Layer 1 §4), else its endpoint. */
function providerOf(options: McpBuyerConnectOptions, capability: CapabilityObject): string {
  if (typeof capability.provider_id === 'string') return capability.provider_id;
  return 'url' in options.endpoint ? options.endpoint.url : `stdio:${options.endpoint.command}`;
}

/** Results are read by the Layer 7 schema (MCP's own fields pass through it). */
const RawResult = z.looseObject({});

/** The credential of each HTTP request: the static token, or a caller token minted for it. */
function authProviderOf(
  options: McpBuyerConnectOptions,
  url: URL,
): { token: () => Promise<string> } | undefined {
  const { token, signer } = options;
  if (token !== undefined) return { token: () => Promise.resolve(token) };
  if (!signer) return undefined;
  const audience = options.audience ?? url.origin;
  return { token: () => mintCallerToken(signer, { audience }) };
}

function clientTransport(options: McpBuyerConnectOptions, watch: InvokeStreamWatch): Transport {
  const { endpoint, token } = options;
  if ('url' in endpoint) {
    const url = new URL(endpoint.url);
    const authProvider = authProviderOf(options, url);
    return new StreamableHTTPClientTransport(url, {
      fetch: watch.wrap(fetchTrusting(options.caCert)),
      ...(authProvider ? { authProvider } : {}),
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

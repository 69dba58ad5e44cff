import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, type AgentCard } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type AfterArgs,
  type BeforeArgs,
  type CallInterceptor,
  type Client,
} from '@a2a-js/sdk/client';
import { fetchTrusting } from '../shared/fetch.js';
import { grpcTransportFactory, grpcUsesTls } from './grpc-client.js';

/** How a client reaches an agent. */
export interface A2AConnectOptions {
  /** Bearer token sent on every RPC (not on the public card fetch). */
  token?: string;
  /** The same as `token`, in the `{ auth }` shape (`createAcmpBuyer({ agentUrl, auth: { token } })`). */
  auth?: { token?: string };
  /** Extra trusted CA certificate (PEM), e.g. the host's self-signed localhost certificate. */
  caCert?: string;
  /** Transport to prefer; default: the card's first. */
  transport?: 'JSONRPC' | 'HTTP+JSON' | 'GRPC';
  /** Dial gRPC with TLS (default: as the card's HTTP interfaces, see `grpcUsesTls`). */
  grpcTls?: boolean;
  /** A2A wire version to speak; '0.3' uses the SDK's compatibility transports. Default '1.0'. */
  protocolVersion?: '1.0' | '0.3';
}

class BearerInterceptor implements CallInterceptor {
  constructor(private readonly token: string) {}
  before(args: BeforeArgs): Promise<void> {
    args.options = {
      ...args.options,
      serviceParameters: { ...args.options?.serviceParameters, Authorization: `Bearer ${this.token}` },
    };
    return Promise.resolve();
  }
  after(_args: AfterArgs): Promise<void> {
    return Promise.resolve();
  }
}

/** Fetches and parses an agent card with the SDK's resolver (v1.0 request; v0.3 cards are normalised). */
export function fetchAgentCard(
  agentUrl: string,
  options: Pick<A2AConnectOptions, 'caCert'> = {},
): Promise<AgentCard> {
  const resolver = new DefaultAgentCardResolver({
    fetchImpl: fetchTrusting(options.caCert),
    legacyCompat: { enabled: true },
  });
  return resolver.resolve(agentUrl.replace(/\/+$/, ''), `/${AGENT_CARD_PATH}`);
}

/**
 * Creates the SDK's real client for a card: the chosen transport (JSON-RPC, HTTP+JSON or gRPC) and wire
 * version, bearer auth on every call (the `authorization` metadata on gRPC), and a fetch or gRPC channel
 * that trusts the given CA. All A2A client access in this package goes through here.
 */
export async function createA2AClient(card: AgentCard, options: A2AConnectOptions = {}): Promise<Client> {
  const fetchImpl = fetchTrusting(options.caCert);
  const bearer = options.token ?? options.auth?.token;
  const version = options.protocolVersion ?? A2A_PROTOCOL_VERSION;
  const legacyCompat = { enabled: true };
  const interfaces = card.supportedInterfaces.filter(
    (i) =>
      (options.transport === undefined || i.protocolBinding === options.transport) &&
      (version === '0.3' ? i.protocolVersion.startsWith('0.') : !i.protocolVersion.startsWith('0.')),
  );
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory({ fetchImpl, legacyCompat }),
        new RestTransportFactory({ fetchImpl, legacyCompat }),
        grpcTransportFactory({ tls: grpcUsesTls(card, options.grpcTls), caCert: options.caCert }),
      ],
      clientConfig: { interceptors: bearer ? [new BearerInterceptor(bearer)] : [] },
    }),
  );
  return factory.createFromAgentCard({ ...card, supportedInterfaces: interfaces });
}

/** The JSON-RPC code and ErrorInfo reason the host answers a missing or wrong bearer token with (docs/host.md). */
const UNAUTHENTICATED_CODE = -31401;

/**
 * Whether an error from an A2A call (or any error it caused) is the peer refusing the caller's
 * credentials: HTTP 401, JSON-RPC -31401, or an ErrorInfo with reason `UNAUTHENTICATED`.
 */
export function isAuthenticationRefusal(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const fields = e as { statusCode?: unknown; status?: unknown; envelopeCode?: unknown; data?: unknown };
    if (fields.statusCode === 401 || fields.status === 401 || fields.envelopeCode === UNAUTHENTICATED_CODE)
      return true;
    const details = Array.isArray(fields.data) ? (fields.data as unknown[]) : [];
    if (details.some((d) => (d as { reason?: unknown } | null)?.reason === 'UNAUTHENTICATED')) return true;
  }
  return false;
}

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
import {
  createDidResolver,
  didWebOf,
  mintCallerToken,
  type DidResolver,
  type Signer,
} from '../acmp/identity/index.js';
import { LocalError } from '../shared/errors.js';
import { fetchTrusting } from '../shared/fetch.js';
import { isJsonObject } from '../shared/json.js';
import { verifyAgentCard } from './card-signature.js';
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
  /**
   * Identify by DID instead of a token: every call carries a fresh caller token signed by this signer
   * (docs/acmp-identity.md "Callers identified by DID"). A `token` wins when both are given.
   */
  signer?: Signer;
  /** The caller tokens' `aud` (default: the origin of the card's first HTTP interface). */
  audience?: string;
  /** Refuse an agent card that carries no signature (A2A §8.4); a signed card is always verified. */
  requireSignedCard?: boolean;
  /** The DID that must have signed the card (default: the did:web of the agent's URL). */
  cardDid?: string;
  /** Resolves the card signer's DID (default: did:key, and did:web over HTTPS trusting `caCert`). */
  didResolver?: DidResolver;
}

/** Mints a caller token per call (Authorization on HTTP, `authorization` metadata on gRPC). */
class DidTokenInterceptor implements CallInterceptor {
  constructor(
    private readonly signer: Signer,
    private readonly audience: string,
  ) {}
  async before(args: BeforeArgs): Promise<void> {
    const token = await mintCallerToken(this.signer, { audience: this.audience });
    args.options = {
      ...args.options,
      serviceParameters: { ...args.options?.serviceParameters, Authorization: `Bearer ${token}` },
    };
  }
  after(_args: AfterArgs): Promise<void> {
    return Promise.resolve();
  }
}

/** The default `aud` of caller tokens for a card: the origin of its first HTTP interface. */
function audienceOf(card: AgentCard): string | undefined {
  const http = card.supportedInterfaces.find((i) => i.protocolBinding !== 'GRPC');
  const url = http?.url ?? card.provider?.url;
  return url === undefined ? undefined : new URL(url).origin;
}

function interceptorsFor(card: AgentCard, options: A2AConnectOptions): CallInterceptor[] {
  const bearer = options.token ?? options.auth?.token;
  if (bearer) return [new BearerInterceptor(bearer)];
  if (!options.signer) return [];
  const audience = options.audience ?? audienceOf(card);
  if (audience === undefined)
    throw new LocalError('CONFIG_INVALID', 'no audience for caller tokens: pass `audience`');
  return [new DidTokenInterceptor(options.signer, audience)];
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

/**
 * Fetches and parses an agent card with the SDK's resolver (v1.0 request; v0.3 cards are normalised).
 * A signed card is verified as received (A2A §8.4.3) against `cardDid`, by default the did:web of
 * `agentUrl`; an unsigned one is refused when `requireSignedCard` is set.
 * @throws AcmpError -36003 `signature_invalid` (`data.check: "agent_card"`) for a card whose signature
 *   does not verify, or an unsigned card that was required signed.
 */
export async function fetchAgentCard(
  agentUrl: string,
  options: Pick<A2AConnectOptions, 'caCert' | 'requireSignedCard' | 'cardDid' | 'didResolver'> = {},
): Promise<AgentCard> {
  const base = agentUrl.replace(/\/+$/, '');
  const fetchImpl = fetchTrusting(options.caCert);
  let received: unknown;
  const capturing: typeof fetch = async (input, init) => {
    const response = await fetchImpl(input, init);
    received = await response
      .clone()
      .json()
      .catch(() => undefined);
    return response;
  };
  const resolver = new DefaultAgentCardResolver({ fetchImpl: capturing, legacyCompat: { enabled: true } });
  const card = await resolver.resolve(base, `/${AGENT_CARD_PATH}`);
  await verifyAgentCard(received, {
    resolver: options.didResolver ?? createDidResolver({ fetch: fetchImpl }),
    expectedDid: options.cardDid ?? didWebOf(base),
    requireSigned: options.requireSignedCard,
  });
  return card;
}

/**
 * Creates the SDK's real client for a card: the chosen transport (JSON-RPC, HTTP+JSON or gRPC) and wire
 * version, bearer auth on every call (a static token, or a fresh caller token from `signer`; the
 * `authorization` metadata on gRPC), and a fetch or gRPC channel
 * that trusts the given CA. All A2A client access in this package goes through here.
 */
export async function createA2AClient(card: AgentCard, options: A2AConnectOptions = {}): Promise<Client> {
  const fetchImpl = fetchTrusting(options.caCert);
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
      clientConfig: { interceptors: interceptorsFor(card, options) },
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
    if (
      ('statusCode' in e && e.statusCode === 401) ||
      ('status' in e && e.status === 401) ||
      ('envelopeCode' in e && e.envelopeCode === UNAUTHENTICATED_CODE)
    )
      return true;
    const details: unknown[] = 'data' in e && Array.isArray(e.data) ? e.data : [];
    if (details.some((d) => isJsonObject(d) && d.reason === 'UNAUTHENTICATED')) return true;
  }
  return false;
}

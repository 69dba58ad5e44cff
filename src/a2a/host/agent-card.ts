import {
  A2A_PROTOCOL_VERSION,
  type AgentCard,
  type AgentExtension,
  type AgentSkill,
  type SecurityRequirement,
} from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';

/** Paths the host serves the two transports on, relative to its base URL. */
export const A2A_PATHS = { jsonRpc: '/a2a/jsonrpc', rest: '/a2a/rest' } as const;

/**
 * How long clients and shared caches may keep the card (`Cache-Control: public, max-age`), the same for
 * the v1.0 and the v0.3 shape: short, because the card lists the interface URLs a restart may change.
 */
export const CARD_MAX_AGE_S = 300;

/** The name of the bearer scheme in the card's `securitySchemes`. */
const BEARER_SCHEME = 'bearer';
/** The name of the scheme of callers identified by DID (docs/acmp-identity.md "Callers identified by DID"). */
const DID_CALLER_SCHEME = 'did-jwt';

/** The HTTP bearer scheme of DID caller tokens: a JWT signed with a key of the caller's DID. */
const DID_CALLER_SECURITY_SCHEME = {
  scheme: {
    $case: 'httpAuthSecurityScheme',
    value: {
      description:
        "JWT signed with a key of the caller's DID (did:key, did:web): kid = verification method, iss = sub = DID, aud = this card's URL or base URL, exp - iat <= 300 s, jti single-use",
      scheme: 'Bearer',
      bearerFormat: 'JWT',
    },
  },
} as const;

export interface AgentCardOptions {
  name: string;
  description: string;
  version: string;
  /** Base URL clients reach the host at (`https://host:port`), no trailing slash. */
  baseUrl: string;
  /** The gRPC interface's address (`host:port`, the target gRPC clients dial); absent: no gRPC interface. */
  grpcUrl?: string | undefined;
  extensions: readonly AgentExtension[];
  skills: readonly AgentSkill[];
  /** Declare the HTTP bearer scheme and require it. */
  bearer: boolean;
  /** Declare the DID caller token scheme ({@link DID_CALLER_SCHEME}) as an alternative to bearer. */
  didCallers?: boolean;
  /** Push notifications are offered (webhook targets are restricted to an allow-list). */
  pushNotifications?: boolean;
  organization?: string;
}

/**
 * Builds the agent card: JSON-RPC and HTTP+JSON interfaces (and gRPC when the host serves it, listed last
 * so clients that take the first interface they support keep JSON-RPC) at A2A v1.0, each mirrored at v0.3
 * for the SDK's compatibility layer (A2A §3.6.2: a binding is reachable at v0.3 only when the card lists it),
 * streaming on, the bindings' extensions and skills, and — when tokens are configured — the HTTP bearer
 * scheme as a requirement (ACMP Layer 1 §5.1 makes bearer the mandatory baseline).
 */
export function buildAgentCard(options: AgentCardOptions): AgentCard {
  // Each requirement is an alternative (OpenAPI security requirement semantics): bearer or a DID token.
  const security: SecurityRequirement[] = [
    ...(options.bearer ? [{ schemes: { [BEARER_SCHEME]: { list: [] } } }] : []),
    ...(options.didCallers === true ? [{ schemes: { [DID_CALLER_SCHEME]: { list: [] } } }] : []),
  ];
  const grpc =
    options.grpcUrl === undefined
      ? []
      : [
          {
            url: options.grpcUrl,
            protocolBinding: 'GRPC',
            tenant: '',
            protocolVersion: A2A_PROTOCOL_VERSION,
          },
        ];
  return {
    name: options.name,
    description: options.description,
    version: options.version,
    supportedInterfaces: duplicateInterfacesForLegacy(
      [
        {
          url: options.baseUrl + A2A_PATHS.jsonRpc,
          protocolBinding: 'JSONRPC',
          tenant: '',
          protocolVersion: A2A_PROTOCOL_VERSION,
        },
        {
          url: options.baseUrl + A2A_PATHS.rest,
          protocolBinding: 'HTTP+JSON',
          tenant: '',
          protocolVersion: A2A_PROTOCOL_VERSION,
        },
        ...grpc,
      ],
      ['JSONRPC', 'HTTP+JSON', 'GRPC'],
    ),
    provider: options.organization ? { organization: options.organization, url: options.baseUrl } : undefined,
    capabilities: {
      streaming: true,
      pushNotifications: options.pushNotifications ?? false,
      extensions: [...options.extensions],
      extendedAgentCard: false,
    },
    securitySchemes: {
      ...(options.bearer
        ? {
            [BEARER_SCHEME]: {
              scheme: {
                $case: 'httpAuthSecurityScheme',
                value: {
                  description: 'Bearer token (ACMP Layer 1 §5.1 baseline)',
                  scheme: 'Bearer',
                  bearerFormat: '',
                },
              },
            },
          }
        : {}),
      ...(options.didCallers === true ? { [DID_CALLER_SCHEME]: DID_CALLER_SECURITY_SCHEME } : {}),
    },
    securityRequirements: security,
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: options.skills.map((s) => ({ ...s, securityRequirements: security })),
    signatures: [],
  };
}

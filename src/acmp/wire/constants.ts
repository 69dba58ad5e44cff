/**
 * Wire strings of ACMP Layer 1 and its A2A binding, written once (STYLE.md "Names").
 */

/** ACMP method names (Layer 1 §2). */
export const ACMP_METHOD = {
  invoke: 'acmp/invoke',
  cancel: 'acmp/cancel',
  streamChunk: 'acmp/streamChunk',
  heartbeat: 'acmp/heartbeat',
  inputChunk: 'acmp/inputChunk',
} as const;

/** ACMP Layer 6 method names (layers/06-negotiation-protocol.md §2). */
export const L6_METHOD = {
  offerRequest: 'acmp/offerRequest',
  accept: 'acmp/accept',
} as const;

/** ACMP Layer 7 method names (layers/07-agent-wallet.md §3). */
export const L7_METHOD = {
  proveIdentity: 'acmp/proveIdentity',
} as const;

/**
 * Methods of our negotiation-session extension (docs/acmp-negotiation.md "Session mode"; not in the spec):
 * the buyer's counter-offer inside a session.
 */
export const SESSION_METHOD = {
  counterOffer: 'acmp/counterOffer',
} as const;

/** The default URI of our negotiation-session extension (a URN we control; configurable per host). */
export const SESSION_EXTENSION_URI = 'urn:a2a-commerce:acmp:negotiation-session:v0';

/** One of the ACMP method names. */
export type AcmpMethod = (typeof ACMP_METHOD)[keyof typeof ACMP_METHOD];

/** The A2A AgentExtension URI of the ACMP shallow binding (A2A binding §2). */
export const ACMP_EXTENSION_URI = 'https://a2agora.org/acmp/v0.1';

/** The media type every ACMP data Part carries (A2A binding §1). */
export const ACMP_MEDIA_TYPE = 'application/acmp+json';

/** The ACMP version we implement and advertise (Layer 1 §6). */
export const ACMP_VERSION = '0.1.0';

/** Default `timeout_ms` of `acmp/invoke` (Layer 1 §3.1). */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Default `output_type` of `acmp/invoke` (Layer 1 §3.1). */
export const DEFAULT_OUTPUT_TYPE = 'json';

/** The longest delay Node timers accept; longer `timeout_ms` values are clamped to it. */
export { MAX_TIMER_MS } from '../../shared/clock.js';

/** The proof methods this implementation can produce and verify (Layer 3 §3.1). */
export const IMPLEMENTED_PROOF_METHODS: readonly string[] = ['result-hash'];

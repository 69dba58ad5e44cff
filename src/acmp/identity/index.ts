/**
 * ACMP Layer 7 identity (docs/acmp-identity.md): the signature envelope (§4), signers that keep their
 * keys, DID resolution for `did:web` and `did:key` (§2.1), and the `did:web` / `did:key` of a key.
 */
export {
  payloadHashOf,
  signingInput,
  signObject,
  SignatureEnvelopeSchema,
  type SignatureEnvelope,
  type Signed,
} from './envelope.js';
export { verifyObject, type DidResolver, type VerifiedSignature, type VerifyOptions } from './verify.js';
export { createKeySigner, type SignatureAlg, type Signer } from './signer.js';
export {
  createDidResolver,
  DEFAULT_DID_CACHE_TTL_MS,
  DEFAULT_DID_TIMEOUT_MS,
  type DidResolverOptions,
} from './resolver.js';
export { didKeyOf } from './did-key.js';
export { didWebDocumentPath, didWebDocumentUrl, didWebOf } from './did-web.js';
export type { DidDocument, VerificationMethod } from './did-document.js';
export {
  createKeyIdentity,
  createWebIdentity,
  type PartyIdentity,
  type WebIdentity,
} from './host-identity.js';
export { addKey, openKeyRing, retireKey, type KeyInfo, type KeyRing } from './key-ring.js';
export {
  answerChallenge,
  createChallenge,
  proveIdentity,
  ProveIdentityResultSchema,
  type IdentityChallenge,
  type IdentityCheckOptions,
  type PeerChallengeOptions,
  type ProveIdentityResult,
} from './prove-identity.js';
export { ProveIdentityParamsSchema, type ProveIdentityParams } from '../wire/identity-messages.js';
export {
  CALLER_TOKEN_MAX_LIFETIME_S,
  CALLER_TOKEN_SKEW_S,
  checkCallerToken,
  mintCallerToken,
  type CallerTokenCheck,
  type CallerTokenPolicy,
  type CallerTokenRefusal,
  type MintCallerTokenOptions,
} from './caller-token.js';
export { createMemoryReplayCache, type MemoryReplayCacheOptions, type ReplayCache } from './replay-cache.js';
export { publicKeyOf } from './public-key.js';
export { signingMethod } from './did-document.js';

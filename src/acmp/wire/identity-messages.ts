import { z } from 'zod';

/** The longest nonce a responder signs (a nonce is an identifier, not a payload). */
const MAX_NONCE_LENGTH = 256;

/**
 * `acmp/proveIdentity` params (Layer 7 §3), one of the wire model's request schemas; its result, an
 * envelope, is identity's (src/acmp/identity/prove-identity.ts).
 */
export const ProveIdentityParamsSchema = z.looseObject({
  nonce: z.string().min(1).max(MAX_NONCE_LENGTH),
});
export type ProveIdentityParams = z.infer<typeof ProveIdentityParamsSchema>;

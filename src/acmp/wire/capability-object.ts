import { z } from 'zod';
import { ACMP_METHOD, ACMP_VERSION, L6_METHOD, L7_METHOD } from './constants.js';

/** The `acmp` capability object (Layer 1 §1; the AgentExtension `params`, A2A binding §2). */
export const CapabilityObjectSchema = z.looseObject({
  version: z.string().min(1),
  role: z.string().min(1),
  // Layer 7 §2.2: the authoritative identity, and the self-reported alias beside it.
  did: z.string().startsWith('did:').optional(),
  provider_id: z.string().optional(),
  accepts: z.array(z.string()),
  emits: z.array(z.string()),
  features: z.looseObject({
    output_streaming: z.boolean().optional(),
    input_streaming: z.boolean().optional(),
    heartbeat_interval_ms: z.int().positive().optional(),
  }),
});
export type CapabilityObject = z.infer<typeof CapabilityObjectSchema>;

/**
 * The capability object with the provider's Layer 7 identity (§2.2): its DID and, beside it, its
 * self-reported `provider_id`; `acmp/proveIdentity` (§3) joins `accepts`.
 */
export function withIdentity(
  capability: CapabilityObject,
  identity: { did: string; providerId: string | undefined },
): CapabilityObject {
  return {
    ...capability,
    did: identity.did,
    ...(identity.providerId !== undefined ? { provider_id: identity.providerId } : {}),
    accepts: [...capability.accepts, L7_METHOD.proveIdentity],
  };
}

/** Builds the Layer 1 §1 capability object: emits only what the features allow. */
export function buildCapabilityObject(
  outputStreaming: boolean,
  heartbeatIntervalMs: number | null,
  negotiation = false,
): CapabilityObject {
  const emits: string[] = [];
  if (outputStreaming) emits.push(ACMP_METHOD.streamChunk);
  if (heartbeatIntervalMs !== null) emits.push(ACMP_METHOD.heartbeat);
  return {
    version: ACMP_VERSION,
    role: 'provider',
    // A2A binding §3.3: no acmp/inputChunk, input_streaming false.
    // Layer 6 methods are listed when served, as Layer 4 §1 lists an escrow agent's methods.
    accepts: [
      ACMP_METHOD.invoke,
      ACMP_METHOD.cancel,
      ...(negotiation ? [L6_METHOD.offerRequest, L6_METHOD.accept] : []),
    ],
    emits,
    features: {
      output_streaming: outputStreaming,
      input_streaming: false,
      ...(heartbeatIntervalMs !== null ? { heartbeat_interval_ms: heartbeatIntervalMs } : {}),
    },
  };
}

import { ACMP_METHOD, ACMP_VERSION, L6_METHOD } from './constants.js';
import type { CapabilityObject } from './messages.js';

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

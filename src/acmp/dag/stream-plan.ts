import type { CapabilityObject } from '../wire/messages.js';
import type { DagPlan } from './dag-check.js';
import type { StreamFallbackReason } from './dag-events.js';

/** Which nodes are invoked with `stream: true`, and why each stream_eligible edge runs without streaming. */
export interface StreamPlan {
  readonly streamed: ReadonlySet<string>;
  readonly fallbacks: readonly { from: string; to: string; reason: StreamFallbackReason }[];
}

/**
 * Decides streaming per Layer 2 §5. A node is invoked with `stream: true` (Layer 1 §7.1) when it has a
 * stream_eligible outgoing edge or its task asks for `stream`, and only when its provider advertised
 * `output_streaming` (Layer 1 §1: never rely on an unadvertised feature); its chunks then reach the
 * caller in order. Forwarding them as `acmp/inputChunk` needs the downstream provider's
 * `input_streaming` AND a buyer binding that sends input chunks; none of ours does (A2A binding §3.3
 * declines input streaming, MCP too: docs/acmp-mcp-binding.md §6), so every stream_eligible edge takes
 * the fallback §5 requires (docs/acmp-dag.md "Streaming", a decision): "wait for
 * the upstream acmp/result, then invoke the downstream with literal input". The reason is reported.
 * A node of a resumed run that already ended has no connected provider (`undefined`): it streams nothing.
 */
export function planStreaming(
  plan: DagPlan,
  capabilityOf: (nodeId: string) => CapabilityObject | undefined,
): StreamPlan {
  const streamed = new Set<string>();
  const fallbacks: { from: string; to: string; reason: StreamFallbackReason }[] = [];
  for (const [id, task] of plan.tasks) {
    const eligible = (plan.downstream.get(id) ?? []).filter((e) => e.stream_eligible === true);
    const outputStreaming = capabilityOf(id)?.features.output_streaming === true;
    if (outputStreaming && (task.stream === true || eligible.length > 0)) streamed.add(id);
    for (const edge of eligible) {
      const reason: StreamFallbackReason = !outputStreaming
        ? 'upstream_no_output_streaming'
        : capabilityOf(edge.to)?.features.input_streaming !== true
          ? 'downstream_no_input_streaming'
          : 'buyer_sends_no_input_chunks';
      fallbacks.push({ from: id, to: edge.to, reason });
    }
  }
  return { streamed, fallbacks };
}

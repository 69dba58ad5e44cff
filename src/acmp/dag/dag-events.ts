import type { HeartbeatParams, Payload, StreamChunkParams } from '../wire/task-messages.js';
import type { NodeOutcome, NodeState, RunState } from './dag-ports.js';

/** Why a stream_eligible edge ran in non-streaming mode (Layer 2 §5 fallback). */
export type StreamFallbackReason =
  /** The upstream provider did not advertise `output_streaming`. */
  | 'upstream_no_output_streaming'
  /** The downstream provider did not advertise `input_streaming` (every A2A provider: A2A binding §3.3). */
  | 'downstream_no_input_streaming'
  /** The downstream provider advertises it, but no buyer binding of ours sends `acmp/inputChunk`. */
  | 'buyer_sends_no_input_chunks';

/** What a run reports while it goes: node transitions, each streamed node's chunks in order, fallbacks. */
export type DagEvent =
  | {
      kind: 'node';
      nodeId: string;
      taskId: string;
      state: NodeState;
      outcome?: NodeOutcome;
      rejoined?: boolean;
    }
  | { kind: 'chunk'; nodeId: string; params: StreamChunkParams }
  | { kind: 'heartbeat'; nodeId: string; params: HeartbeatParams }
  | { kind: 'fallback'; from: string; to: string; reason: StreamFallbackReason };

/** One node in a run's result. */
export interface DagNodeReport {
  readonly state: NodeState;
  readonly taskId: string;
  readonly outcome?: NodeOutcome;
}

/** How a run ended. */
export interface DagRunResult {
  readonly runId: string;
  readonly dagId: string;
  readonly state: Exclude<RunState, 'running'>;
  readonly nodes: Readonly<Record<string, DagNodeReport>>;
  /** The outputs of the leaf tasks that completed (Layer 2 §3: "their outputs form the DAG's result"). */
  readonly result: Readonly<Record<string, Payload>>;
  /** The sum of the completed and failed nodes' `cost_cu`. */
  readonly totalCostCu: number;
  readonly budgetCu: number;
}

import type { BuyerEvent, InvokeInput } from '../buyer/buyer.js';
import type { CapabilityObject } from '../wire/messages.js';
import type { InvokeParams, Payload } from '../wire/task-messages.js';
import type { DagBinding } from './dag-model.js';

/** A provider the runner buys nodes from: what it advertised and a call that yields its events. */
export interface DagProvider {
  /** The capability object the provider advertised (Layer 1 §1): the runner relies on nothing else. */
  readonly capabilityObject: CapabilityObject;
  /**
   * Invokes and yields chunks, heartbeats and the result (the buyer core's contract). Aborting `signal`
   * makes the buyer send `acmp/cancel` (Layer 1 §3.7) before the iteration rejects.
   */
  stream(params: InvokeInput, options: { signal: AbortSignal }): AsyncIterable<BuyerEvent>;
}

/** How the runner reaches providers (implemented over the real bindings in src/connect/dag-buyer.ts). */
export interface DagBuyerPort {
  /**
   * The provider at an agent URL over `binding` (the task's, docs/acmp-dag.md; omitted: the port's pick),
   * connected once per run and binding.
   * @throws AcmpError -33007 when the provider does not offer ACMP on that binding; the binding's
   *   connection errors.
   */
  provider(agentUrl: string, options?: { signal?: AbortSignal; binding?: DagBinding }): Promise<DagProvider>;
  close(): Promise<void>;
}

/** A node's state (Layer 2 §2, buyer side: `pending` until its invoke is about to be sent). */
export type NodeState = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';

/**
 * Why a node failed: the provider's ACMP error object (numeric code, Layer 1 §3.3), or the runner's own
 * refusal (a `DAG_*` code, or a local code such as `TRANSPORT`). Never a stack trace or a cause's text.
 */
export interface NodeError {
  readonly code: number | string;
  readonly message: string;
  readonly data?: unknown;
}

/** How a node ended, as stored and reported. */
export type NodeOutcome =
  | { state: 'completed'; output: Payload; costCu: number; proof?: unknown }
  | { state: 'failed'; error: NodeError; costCu?: number }
  | { state: 'cancelled'; reason: string };

/** A stored node: its wire task id and invoke params once started, its outcome once finished. */
export interface StoredNode {
  readonly nodeId: string;
  readonly state: NodeState;
  readonly taskId: string;
  /** The exact params sent (stored BEFORE the send: the exactly-once mechanism, docs/acmp-dag.md). */
  readonly params?: InvokeParams;
  readonly outcome?: NodeOutcome;
}

/** A run's final state. */
export type RunState = 'running' | 'completed' | 'failed' | 'cancelled';

/** A stored run: the DAG it executes and how it is executed. */
export interface StoredRun {
  readonly runId: string;
  readonly dagId: string;
  /** The DAG document, as given (canonical JSON). */
  readonly dag: string;
  /** The run's terms (budget, policy, default provider), as JSON. */
  readonly terms: string;
  readonly state: RunState;
  readonly nodes: readonly StoredNode[];
}

/** Where runs are kept (memory for tests and one-shot runs; SQLite/PostgreSQL for resumable ones). */
export interface DagRunStore {
  /** Creates a run with every node pending; `exists` (nothing written) when the run id is taken. */
  createRun(run: Omit<StoredRun, 'state'>): Promise<'created' | 'exists'>;
  loadRun(runId: string): Promise<StoredRun | undefined>;
  /** Marks a node running with the params about to be sent. */
  startNode(runId: string, node: { nodeId: string; params: InvokeParams }): Promise<void>;
  /** Records how a node ended (terminal states are never overwritten). */
  finishNode(runId: string, node: { nodeId: string; outcome: NodeOutcome }): Promise<void>;
  finishRun(runId: string, state: Exclude<RunState, 'running'>): Promise<void>;
}

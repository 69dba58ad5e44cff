import { AcmpError } from '../wire/errors.js';
import type {
  HeartbeatParams,
  InvokeParams,
  Payload,
  Proof,
  StreamChunkParams,
} from '../wire/task-messages.js';
import { verifyProof } from '../wire/proof.js';
import { isLocalError } from '../../shared/errors.js';
import { isJsonObject } from '../../shared/json.js';
import type { DagTask } from './dag-model.js';
import { DAG_CODE, DagError } from './dag-errors.js';
import type { DagProvider, NodeError, NodeOutcome } from './dag-ports.js';

/** The proof the runner asks for when a task names none: every node's output is verified (Layer 3 §2). */
const DEFAULT_NODE_PROOF = 'result-hash';

/** Task fields that exist only in the buyer's plan and are never sent (docs/acmp-dag.md "The DAG file"). */
const PLAN_ONLY_FIELDS = ['provider', 'binding'] as const;

/**
 * The `acmp/invoke` params of a node: the Task as the DAG states it (Layer 2 §1: "Every acmp/invoke
 * request carries exactly one Task") with the run's wire task id, the resolved literal input (Layer 2 §3:
 * "The provider therefore always receives a literal input"), `metadata.dag_id` (a reserved key, §1), a
 * proof method, and `stream: true` only where the provider advertised `output_streaming` (Layer 1 §1).
 */
export function nodeParams(
  task: DagTask,
  wire: { taskId: string; dagId: string; input: Payload },
  options: { stream: boolean },
): InvokeParams {
  const fields: Record<string, unknown> = { ...task };
  for (const name of PLAN_ONLY_FIELDS) delete fields[name];
  delete fields['stream'];
  return {
    ...fields,
    task_id: wire.taskId,
    capability: task.capability,
    input: wire.input,
    metadata: { ...task.metadata, dag_id: wire.dagId },
    proof_method: task.proof_method ?? DEFAULT_NODE_PROOF,
    ...(options.stream ? { stream: true } : {}),
  };
}

/** What a running node reports besides its outcome. */
export type NodeProgress =
  { kind: 'chunk'; params: StreamChunkParams } | { kind: 'heartbeat'; params: HeartbeatParams };

/**
 * Buys one node and decides its outcome. The result's proof is verified against the output and the input
 * sent before the outcome is `completed` (the output feeds other nodes only then); a cost above the
 * node's ceiling fails the node (Layer 1 §3.1 `max_price_cu`). Never throws: an abort of `signal` ends as
 * `cancelled` (the buyer has sent `acmp/cancel`, Layer 1 §3.7), any other error as `failed`.
 */
export async function executeNode(
  provider: DagProvider,
  params: InvokeParams,
  options: { signal: AbortSignal; onProgress: (progress: NodeProgress) => void },
): Promise<NodeOutcome> {
  try {
    for await (const event of provider.stream(params, { signal: options.signal })) {
      if (event.kind !== 'result') {
        options.onProgress(event);
        continue;
      }
      return judgeResult(params, {
        output: event.output,
        costCu: event.result.cost_cu,
        proof: event.result.proof,
      });
    }
    return failed({ code: 'STREAM_CLOSED', message: 'the provider ended without a result' });
  } catch (error) {
    if (options.signal.aborted) return { state: 'cancelled', reason: abortReason(options.signal) };
    return failed(nodeError(error));
  }
}

function judgeResult(
  params: InvokeParams,
  result: { output: Payload; costCu: number; proof: Proof | undefined },
): NodeOutcome {
  const method = params.proof_method ?? DEFAULT_NODE_PROOF;
  const check = verifyProof(result.proof, {
    method,
    output: result.output,
    ...(params.input ? { input: params.input } : {}),
  });
  if (!check.ok)
    return failed(
      {
        code: DAG_CODE.proofFailed.name,
        message: `the ${method} proof did not verify`,
        data: { reason: check.reason },
      },
      result.costCu,
    );
  const ceiling = params.max_price_cu;
  if (ceiling !== undefined && result.costCu > ceiling)
    return failed(
      {
        code: DAG_CODE.overCeiling.name,
        message: 'cost_cu is above the node ceiling',
        data: { cost_cu: result.costCu, max_price_cu: ceiling },
      },
      result.costCu,
    );
  return {
    state: 'completed',
    output: result.output,
    costCu: result.costCu,
    ...(result.proof !== undefined ? { proof: result.proof } : {}),
  };
}

function failed(error: NodeError, costCu?: number): NodeOutcome {
  return { state: 'failed', error, ...(costCu !== undefined ? { costCu } : {}) };
}

/** What is said about a node's error: codes and the spec's messages only, never a cause's text. */
export function nodeError(error: unknown): NodeError {
  if (error instanceof AcmpError) return error.toObject();
  if (error instanceof DagError) return { code: error.code, message: error.message };
  if (isLocalError(error)) return { code: error.code, message: error.message };
  return { code: 'TRANSPORT', message: 'the provider could not be reached' };
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  const data = reason instanceof AcmpError ? reason.data : undefined;
  return isJsonObject(data) && typeof data.reason === 'string' ? data.reason : 'cancelled';
}

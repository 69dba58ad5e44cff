import type { Payload } from '../wire/task-messages.js';
import type { DagPlan } from './dag-check.js';
import type { DagNodeReport, DagRunResult } from './dag-events.js';
import type { NodeOutcome, NodeState, RunState } from './dag-ports.js';

/**
 * A run's result from its nodes: the run failed when a node failed, was cancelled when a node was
 * cancelled (and none failed), else completed; the result holds the completed leaves' outputs (Layer 2
 * §3); the cost sums what providers charged, failed nodes included.
 */
export function reportOf(
  plan: DagPlan,
  run: {
    runId: string;
    budgetCu: number;
    nodes: ReadonlyMap<string, { state: NodeState; taskId: string; outcome?: NodeOutcome }>;
    state?: Exclude<RunState, 'running'>;
  },
): DagRunResult {
  const nodes: Record<string, DagNodeReport> = {};
  const result: Record<string, Payload> = {};
  let cost = 0;
  let anyFailed = false;
  let anyCancelled = false;
  for (const id of plan.order) {
    const node = run.nodes.get(id);
    if (!node) continue;
    nodes[id] = {
      state: node.state,
      taskId: node.taskId,
      ...(node.outcome ? { outcome: node.outcome } : {}),
    };
    const outcome = node.outcome;
    if (outcome?.state === 'completed' || outcome?.state === 'failed') cost += outcome.costCu ?? 0;
    if (outcome?.state === 'completed' && plan.leaves.includes(id)) result[id] = outcome.output;
    anyFailed ||= node.state === 'failed';
    anyCancelled ||= node.state === 'cancelled' || node.state === 'pending';
  }
  const state = run.state ?? (anyFailed ? 'failed' : anyCancelled ? 'cancelled' : 'completed');
  return {
    runId: run.runId,
    dagId: plan.dag.dag_id,
    state,
    nodes,
    result,
    totalCostCu: Math.round(cost * 1e9) / 1e9,
    budgetCu: run.budgetCu,
  };
}

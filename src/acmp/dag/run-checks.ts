import { createHash } from 'node:crypto';
import type { DagPlan } from './dag-check.js';
import type { DagBinding } from './dag-model.js';
import { dagProblem, type DagProblem } from './dag-errors.js';

/** What a run needs beyond a valid DAG: its budget and where tasks without a `provider` are bought. */
export interface RunTerms {
  /** The total budget in CU (`--budget`, else the DAG's `budget_cu`). */
  readonly budgetCu?: number | undefined;
  /** The agent URL of every task that names no `provider`. */
  readonly defaultProvider?: string | undefined;
  /** The binding of every task that names no `binding` (docs/acmp-dag.md "The DAG file"). */
  readonly defaultBinding?: DagBinding | undefined;
}

/**
 * The money and routing checks of a run, before anything is sent (docs/acmp-dag.md "Money"): a budget
 * exists; every task has a ceiling (`max_price_cu`, Layer 1 §3.1); the ceilings' sum does not exceed the
 * budget (so no outcome can); every task has a provider.
 */
export function checkRunTerms(plan: DagPlan, terms: RunTerms): DagProblem[] {
  const problems: DagProblem[] = [];
  const budget = terms.budgetCu ?? plan.dag.budget_cu;
  if (budget === undefined || !Number.isFinite(budget) || budget < 0)
    problems.push(
      dagProblem('budgetMissing', '/budget_cu', 'a run needs a total budget (budget_cu or --budget)'),
    );
  let sum = 0;
  plan.dag.tasks.forEach((task, i) => {
    if (task.max_price_cu === undefined)
      problems.push(
        dagProblem(
          'ceilingMissing',
          `/tasks/${i}/max_price_cu`,
          `task "${task.task_id}" has no max_price_cu ceiling`,
        ),
      );
    else sum += task.max_price_cu;
    if (task.provider === undefined && terms.defaultProvider === undefined)
      problems.push(
        dagProblem(
          'providerMissing',
          `/tasks/${i}/provider`,
          `task "${task.task_id}" names no provider (and no default is set)`,
        ),
      );
  });
  // Rounded to the nano-CU so 0.1 + 0.2 does not exceed a budget of 0.3.
  const total = Math.round(sum * 1e9) / 1e9;
  if (budget !== undefined && total > budget)
    problems.push(
      dagProblem(
        'budgetExceeded',
        '/tasks',
        `the ceilings sum to ${total} CU, above the budget of ${budget} CU`,
      ),
    );
  return problems;
}

/** Where a task is bought: the agent URL and, when the task names one, the binding. */
export interface ProviderRoute {
  readonly url: string;
  readonly binding?: DagBinding;
}

/** The route of a task: its `provider` and `binding`, else the run's defaults. */
export function routeOf(plan: DagPlan, taskId: string, terms: RunTerms): ProviderRoute {
  const task = plan.tasks.get(taskId);
  const url = task?.provider ?? terms.defaultProvider;
  if (url === undefined) throw new RangeError(`task ${taskId} has no provider`);
  const binding = task?.binding ?? terms.defaultBinding;
  return binding !== undefined ? { url, binding } : { url };
}

/** One connection per route: the same URL over two bindings is two providers to the runner. */
export function routeKey(route: ProviderRoute): string {
  return `${route.binding ?? '*'} ${route.url}`;
}

/**
 * The wire `task_id` of a node: `task_` + 31 hex digits of SHA-256 over the run id and the DAG task id.
 * Deterministic, so a resumed run re-sends the very id it stored before its first send and the
 * provider's idempotency (Layer 1 §3.1.1: the task_id "acts as the idempotency key") replays or re-joins
 * the task instead of running it again; distinct per run, so running the same DAG file twice buys twice.
 * 36 characters: short enough for every task store.
 */
export function nodeTaskId(runId: string, dagTaskId: string): string {
  const digest = createHash('sha256').update(`${runId}\u0000${dagTaskId}`).digest('hex');
  return `task_${digest.slice(0, 31)}`;
}

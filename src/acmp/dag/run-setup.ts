import { canonicalJson } from '../../shared/jcs.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import type { DagPlan } from './dag-check.js';
import { DagError, dagProblem } from './dag-errors.js';
import type { DagBuyerPort, DagProvider, DagRunStore, StoredRun } from './dag-ports.js';
import { nodeTaskId, routeKey, routeOf, type RunTerms } from './run-checks.js';

/** What opening a run needs: its id, where it is stored, and the terms it runs under. */
interface RunIdentity {
  readonly runId: string;
  readonly store: DagRunStore;
  readonly terms: RunTerms;
}

/** What connecting a run's providers needs. */
interface ProviderAccess {
  readonly port: DagBuyerPort;
  readonly terms: RunTerms;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Creates the run with every node pending (a run that exists is kept as stored) and loads it
 * (docs/acmp-dag.md "Durability": the same run id resumes the run).
 * @throws DagError `DAG_RUN_CONFLICT` when the run id holds another DAG, or the same DAG under other terms.
 */
export async function openStoredRun(plan: DagPlan, run: RunIdentity): Promise<StoredRun> {
  const { runId, store } = run;
  const dag = canonicalJson(plan.dag);
  const nodes = plan.order.map((nodeId) => ({
    nodeId,
    state: 'pending' as const,
    taskId: nodeTaskId(runId, nodeId),
  }));
  await store.createRun({
    runId,
    dagId: plan.dag.dag_id,
    dag,
    terms: canonicalJson(run.terms),
    nodes,
  });
  const stored = await store.loadRun(runId);
  if (stored?.dag !== dag)
    throw new DagError([dagProblem('runConflict', '', `run "${runId}" exists and executes a different DAG`)]);
  // A resumed run spends the same budget over the same routes: other terms are another run.
  if (canonicalJson(JSON.parse(stored.terms) as unknown) !== canonicalJson(run.terms))
    throw new DagError([
      dagProblem(
        'runConflict',
        '',
        `run "${runId}" exists with other terms (budget, default provider or binding)`,
      ),
    ]);
  return stored;
}

/**
 * Connects once per provider URL and binding (keyed by {@link routeKey}), before any node is sent;
 * refuses one that does not take invokes, or does not offer ACMP on the binding the task names.
 * @throws DagError `DAG_PROVIDER_UNFIT`, `DAG_PROVIDER_UNREACHABLE`; a provider's coded refusal as it is.
 */
export async function connectProviders(
  plan: DagPlan,
  nodeIds: Iterable<string>,
  access: ProviderAccess,
): Promise<Map<string, DagProvider>> {
  const providers = new Map<string, DagProvider>();
  for (const id of nodeIds) {
    const route = routeOf(plan, id, access.terms);
    const key = routeKey(route);
    if (providers.has(key)) continue;
    const { url, binding } = route;
    const over = binding === undefined ? '' : ` over ${binding}`;
    const provider = await access.port
      .provider(url, { signal: access.signal, ...(binding ? { binding } : {}) })
      .catch((error) => {
        if (access.signal?.aborted || error instanceof DagError) throw error;
        if (error instanceof AcmpError && error.code === ACMP_CODE.featureUnsupported)
          throw new DagError([
            dagProblem('providerUnfit', '', `the provider of task "${id}" at ${url} offers no ACMP${over}`),
          ]);
        // A provider's coded refusal passes as it is; a transport failure names who.
        if (error instanceof AcmpError) throw error;
        throw new DagError([
          dagProblem(
            'providerUnreachable',
            '',
            `the provider of task "${id}" at ${url}${over} could not be reached`,
          ),
        ]);
      });
    if (!provider.capabilityObject.accepts.includes('acmp/invoke'))
      throw new DagError([
        dagProblem('providerUnfit', '', `the provider of task "${id}" does not accept acmp/invoke`),
      ]);
    providers.set(key, provider);
  }
  return providers;
}

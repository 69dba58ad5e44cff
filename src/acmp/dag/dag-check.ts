import { DagSchema, isInputReference, sourcesOf, type Dag, type DagEdge, type DagTask } from './dag-model.js';
import { DagError, dagProblem, type DagProblem } from './dag-errors.js';
import { isWholePayload, parseFieldPath } from './field-path.js';

/** A validated DAG with its graph: upstream and downstream ids per task, and a topological order. */
export interface DagPlan {
  readonly dag: Dag;
  readonly tasks: ReadonlyMap<string, DagTask>;
  readonly upstream: ReadonlyMap<string, readonly DagEdge[]>;
  readonly downstream: ReadonlyMap<string, readonly DagEdge[]>;
  /** Task ids, every task after all its upstream tasks. */
  readonly order: readonly string[];
  /** Root tasks (no incoming edge, Layer 2 §3) and leaf tasks (no outgoing edge: the DAG's result). */
  readonly roots: readonly string[];
  readonly leaves: readonly string[];
}

/**
 * Checks a DAG document against Layer 2 §3 and returns its plan, or every problem found:
 * - the DAG and Task schemas (§3 "DAG Schema", §1 "Task Schema", §1.1 input forms);
 * - unique task ids (§1: `task_id` is unique) and unique edges;
 * - "Every task_id referenced in edges MUST exist in the tasks array" (§3 DAG Constraints);
 * - "The graph MUST be acyclic. An implementation MUST reject DAGs with cycles." (§3);
 * - "Every from_task / from_tasks referenced in an input source MUST correspond to an upstream edge into
 *   the referencing task" (§3), so a root task always has literal input;
 * - every `field` within the path grammar (§3 "Input References": "Implementations MUST support this
 *   subset"; anything else is refused, not guessed);
 * - a `stream_eligible` edge "MUST reference the whole upstream output — its source MUST omit field (or
 *   use field: "data")" (§5).
 */
export function checkDag(
  value: unknown,
): { ok: true; plan: DagPlan } | { ok: false; problems: DagProblem[] } {
  const parsed = DagSchema.safeParse(value);
  if (!parsed.success)
    return {
      ok: false,
      problems: parsed.error.issues.map((i) =>
        dagProblem('schema', i.path.map((p) => `/${String(p)}`).join(''), i.message),
      ),
    };
  const dag = parsed.data;
  const problems: DagProblem[] = [];
  const tasks = indexTasks(dag, problems);
  const { upstream, downstream } = indexEdges(dag, tasks, problems);
  checkReferences(dag, upstream, problems);
  if (problems.length > 0) return { ok: false, problems };
  const order = topologicalOrder(dag, { upstream, downstream });
  if (!order.ok) return { ok: false, problems: [order.problem] };
  const ids = dag.tasks.map((t) => t.task_id);
  return {
    ok: true,
    plan: {
      dag,
      tasks,
      upstream,
      downstream,
      order: order.order,
      roots: ids.filter((id) => (upstream.get(id) ?? []).length === 0),
      leaves: ids.filter((id) => (downstream.get(id) ?? []).length === 0),
    },
  };
}

/** {@link checkDag}, throwing. @throws DagError with every problem (the first names the error). */
export function parseDag(value: unknown): DagPlan {
  const checked = checkDag(value);
  if (!checked.ok) throw new DagError(checked.problems);
  return checked.plan;
}

function indexTasks(dag: Dag, problems: DagProblem[]): Map<string, DagTask> {
  const tasks = new Map<string, DagTask>();
  dag.tasks.forEach((task, i) => {
    if (tasks.has(task.task_id))
      problems.push(
        dagProblem('duplicateTask', `/tasks/${i}/task_id`, `task_id "${task.task_id}" appears twice`),
      );
    tasks.set(task.task_id, task);
  });
  return tasks;
}

function indexEdges(
  dag: Dag,
  tasks: ReadonlyMap<string, DagTask>,
  problems: DagProblem[],
): { upstream: Map<string, DagEdge[]>; downstream: Map<string, DagEdge[]> } {
  const upstream = new Map<string, DagEdge[]>(dag.tasks.map((t) => [t.task_id, []]));
  const downstream = new Map<string, DagEdge[]>(dag.tasks.map((t) => [t.task_id, []]));
  const seen = new Set<string>();
  dag.edges.forEach((edge, i) => {
    let known = true;
    for (const end of ['from', 'to'] as const) {
      if (tasks.has(edge[end])) continue;
      known = false;
      problems.push(
        dagProblem(
          'unknownTask',
          `/edges/${i}/${end}`,
          `edge ${end} "${edge[end]}" is not a task_id of the DAG`,
        ),
      );
    }
    const key = JSON.stringify([edge.from, edge.to]);
    if (seen.has(key))
      problems.push(
        dagProblem('duplicateEdge', `/edges/${i}`, `edge ${edge.from} → ${edge.to} appears twice`),
      );
    seen.add(key);
    if (!known) return;
    upstream.get(edge.to)?.push(edge);
    downstream.get(edge.from)?.push(edge);
  });
  return { upstream, downstream };
}

function checkReferences(
  dag: Dag,
  upstream: ReadonlyMap<string, readonly DagEdge[]>,
  problems: DagProblem[],
): void {
  dag.tasks.forEach((task, i) => {
    const incoming = upstream.get(task.task_id) ?? [];
    const at = `/tasks/${i}/input/source`;
    for (const from of sourcesOf(task.input)) {
      const edge = incoming.find((e) => e.from === from);
      if (!edge) {
        problems.push(
          dagProblem(
            'referenceWithoutEdge',
            at,
            `task "${task.task_id}" references "${from}" without an edge ${from} → ${task.task_id}`,
          ),
        );
        continue;
      }
      const field = isInputReference(task.input) ? task.input.source.field : undefined;
      if (edge.stream_eligible === true && !isWholePayload(field))
        problems.push(
          dagProblem(
            'streamedField',
            `${at}/field`,
            `edge ${from} → ${task.task_id} is stream_eligible, so its source must omit field or use "data" (got "${String(field)}")`,
          ),
        );
    }
    const field = isInputReference(task.input) ? task.input.source.field : undefined;
    if (field === undefined) return;
    const path = parseFieldPath(field);
    if (!path.ok) problems.push(dagProblem('fieldPath', `${at}/field`, path.reason));
  });
}

/** Kahn's algorithm; a task left over lies on a cycle, which is traced and named. */
function topologicalOrder(
  dag: Dag,
  graph: Pick<DagPlan, 'upstream' | 'downstream'>,
): { ok: true; order: string[] } | { ok: false; problem: DagProblem } {
  const { downstream } = graph;
  const indegree = new Map(dag.tasks.map((t) => [t.task_id, 0]));
  for (const edges of downstream.values())
    for (const e of edges) indegree.set(e.to, (indegree.get(e.to) ?? 0) + 1);
  const queue = dag.tasks.map((t) => t.task_id).filter((id) => indegree.get(id) === 0);
  const order: string[] = [];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    order.push(id);
    for (const e of downstream.get(id) ?? []) {
      const left = (indegree.get(e.to) ?? 0) - 1;
      indegree.set(e.to, left);
      if (left === 0) queue.push(e.to);
    }
  }
  if (order.length === dag.tasks.length) return { ok: true, order };
  const cycle = traceCycle(
    [...indegree].filter(([, n]) => n > 0).map(([id]) => id),
    graph.upstream,
  );
  return {
    ok: false,
    problem: dagProblem('cycle', '/edges', `the graph has a cycle: ${cycle.join(' → ')}`),
  };
}

/**
 * A cycle among the tasks Kahn's algorithm could not order. Each of them has an upstream task among them
 * (else it would have been ordered), so walking upstream inside them must repeat: that repeat closes a
 * cycle, returned in edge direction.
 */
function traceCycle(left: readonly string[], upstream: ReadonlyMap<string, readonly DagEdge[]>): string[] {
  const inside = new Set(left);
  const path: string[] = [];
  let id = left[0];
  while (id !== undefined && !path.includes(id)) {
    path.push(id);
    id = (upstream.get(id) ?? []).map((e) => e.from).find((from) => inside.has(from));
  }
  if (id === undefined) return path;
  const cycle = path.slice(path.indexOf(id)).reverse();
  return [...cycle, cycle[0] ?? id];
}

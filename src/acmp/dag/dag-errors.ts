/**
 * Why a DAG is refused before anything is spent, or why a node could not be started: one table (code,
 * what it means, the Layer 2 section it enforces). These errors never cross the wire — the DAG is a
 * buyer-side plan (Layer 2 §3: "Providers never see the DAG").
 */
export const DAG_CODE = {
  schema: { name: 'DAG_SCHEMA', section: '§3 DAG Schema / §1 Task Schema' },
  duplicateTask: { name: 'DAG_DUPLICATE_TASK', section: '§1 task_id (unique)' },
  unknownTask: { name: 'DAG_UNKNOWN_TASK', section: '§3 DAG Constraints' },
  duplicateEdge: { name: 'DAG_DUPLICATE_EDGE', section: '§3 Edge Schema' },
  cycle: { name: 'DAG_CYCLE', section: '§3 DAG Constraints' },
  referenceWithoutEdge: { name: 'DAG_REFERENCE_WITHOUT_EDGE', section: '§3 DAG Constraints' },
  fieldPath: { name: 'DAG_FIELD_PATH', section: '§3 Input References (path grammar)' },
  streamedField: { name: 'DAG_STREAMED_FIELD', section: '§5 Streaming Within DAGs' },
  budgetMissing: { name: 'DAG_BUDGET_MISSING', section: 'docs/acmp-dag.md "Money"' },
  ceilingMissing: { name: 'DAG_CEILING_MISSING', section: 'docs/acmp-dag.md "Money"' },
  budgetExceeded: { name: 'DAG_BUDGET_EXCEEDED', section: 'docs/acmp-dag.md "Money"' },
  providerMissing: { name: 'DAG_PROVIDER_MISSING', section: 'docs/acmp-dag.md "Providers"' },
  providerUnfit: { name: 'DAG_PROVIDER_UNFIT', section: 'Layer 1 §1 (nothing unadvertised)' },
  providerUnreachable: { name: 'DAG_PROVIDER_UNREACHABLE', section: 'docs/acmp-dag.md "Providers"' },
  referenceUnresolved: { name: 'DAG_REFERENCE_UNRESOLVED', section: '§3 Input References' },
  proofFailed: { name: 'DAG_PROOF_FAILED', section: 'Layer 3 §2 / docs/acmp-dag.md' },
  overCeiling: { name: 'DAG_OVER_CEILING', section: 'Layer 1 §3.1 max_price_cu' },
  runConflict: { name: 'DAG_RUN_CONFLICT', section: 'docs/acmp-dag.md "Durability"' },
} as const satisfies Record<string, { name: string; section: string }>;

export type DagCodeKey = keyof typeof DAG_CODE;
export type DagCodeName = (typeof DAG_CODE)[DagCodeKey]['name'];

/** One problem with a DAG: its code, a JSON pointer into the DAG document, and the exact reason. */
export interface DagProblem {
  readonly code: DagCodeName;
  /** JSON pointer (RFC 6901) to the offending value, `''` for the DAG as a whole. */
  readonly path: string;
  readonly message: string;
}

/** Builds a {@link DagProblem} from a table key. */
export function dagProblem(key: DagCodeKey, path: string, message: string): DagProblem {
  return { code: DAG_CODE[key].name, path, message };
}

/** A refused DAG or run: every problem found (the first one names the error). Never sent to a provider. */
export class DagError extends Error {
  readonly code: DagCodeName;
  readonly problems: readonly DagProblem[];

  constructor(problems: readonly DagProblem[]) {
    const first = problems[0] ?? dagProblem('schema', '', 'the DAG is invalid');
    super(`${first.code}${first.path ? ` at ${first.path}` : ''}: ${first.message}`);
    this.name = 'DagError';
    this.code = first.code;
    this.problems = problems.length > 0 ? problems : [first];
  }
}

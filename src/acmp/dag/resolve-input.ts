import type { Payload } from '../wire/task-messages.js';
import { isInputReference, type DagInput } from './dag-model.js';
import { DagError, dagProblem } from './dag-errors.js';
import { parseFieldPath, selectPath } from './field-path.js';

/**
 * Resolves a task's input into the literal `{type, data}` the provider receives (Layer 2 §3: "The
 * orchestrator resolves every source input into a concrete literal {type, data} before invoking the
 * downstream task. The provider therefore always receives a literal input.").
 *
 * The type rules (Layer 2 "Input/Output Types"; docs/acmp-dag.md "Reference resolution" for what §3
 * leaves open):
 * - `from_task` without `field`, or `field: "data"`: the referenced output itself, its `type` kept.
 * - `from_task` with a deeper `field`: the selected value; `text` when it is a string, `json` otherwise.
 * - `from_tasks`: `json`, an array in the listed order (§3: "passes their outputs as an ordered array"):
 *   each element the whole output object `{type, data}`, or with `field` the value it selects in each.
 * @param outputs the completed upstream outputs by DAG task_id (each verified before it gets here).
 * @throws DagError `DAG_REFERENCE_UNRESOLVED` when an upstream output is missing or a path selects nothing.
 */
export function resolveInput(
  input: DagInput,
  outputs: ReadonlyMap<string, Payload>,
  at: { taskId: string },
): Payload {
  if (!isInputReference(input)) return input;
  const { from_task, from_tasks, field } = input.source;
  if (from_task !== undefined) {
    const output = outputOf(outputs, from_task, at.taskId);
    if (field === undefined || field === 'data') return { type: output.type, data: output.data };
    const value = select(output, field, at.taskId);
    return typeof value === 'string'
      ? { type: 'text', data: value }
      : { type: 'json', data: value as Payload['data'] };
  }
  const values = (from_tasks ?? []).map((id) => {
    const output = outputOf(outputs, id, at.taskId);
    return field === undefined ? { type: output.type, data: output.data } : select(output, field, at.taskId);
  });
  return { type: 'json', data: values as Payload['data'] };
}

function outputOf(outputs: ReadonlyMap<string, Payload>, from: string, taskId: string): Payload {
  const output = outputs.get(from);
  if (output === undefined)
    throw new DagError([
      dagProblem('referenceUnresolved', '', `task "${taskId}" references "${from}", which has no output`),
    ]);
  return output;
}

function select(output: Payload, field: string, taskId: string): unknown {
  const path = parseFieldPath(field);
  if (!path.ok) throw new DagError([dagProblem('fieldPath', '', path.reason)]);
  const selected = selectPath(output.data, path.steps);
  if (!selected.found)
    throw new DagError([
      dagProblem(
        'referenceUnresolved',
        '',
        `"${field}" of task "${taskId}" selects nothing at ${selected.at}`,
      ),
    ]);
  return selected.value;
}

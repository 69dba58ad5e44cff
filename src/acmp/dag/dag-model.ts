import { z } from 'zod';
import { PayloadSchema, type Payload } from '../wire/task-messages.js';

/*
 * Zod schemas written from ACMP Layer 2 §1 (Task object), §1.1 (literal input vs. input reference), §3
 * (DAG schema, edge schema, input references). Objects are loose like the Layer 1 schemas: unknown task
 * fields pass through to the provider unchanged. Buyer-side fields are ours (docs/acmp-dag.md): a task's
 * `provider` (the agent URL it is bought from) and `binding` (how it is reached), never sent, and the
 * DAG's `budget_cu`.
 */

/**
 * How a task's provider is reached: an A2A transport, spelled as the agent card's `protocolBinding`
 * (A2A v1.0: `JSONRPC`, `HTTP+JSON`, `GRPC`), or `MCP` (the provider's MCP endpoint). Omitted: the
 * card's preferred transport, else MCP (as `acmp invoke` picks; docs/acmp-dag.md "The DAG file").
 */
export const DAG_BINDINGS = ['JSONRPC', 'HTTP+JSON', 'GRPC', 'MCP'] as const;
export type DagBinding = (typeof DAG_BINDINGS)[number];

/**
 * An input reference (Layer 2 §3 "Input References"): exactly one of `from_task` / `from_tasks` ("mutually
 * exclusive"), and an optional `field` path (checked by the path grammar, not here).
 */
const InputSourceSchema = z
  .strictObject({
    from_task: z.string().min(1).optional(),
    from_tasks: z.array(z.string().min(1)).min(1).optional(),
    field: z.string().min(1).optional(),
  })
  .refine((s) => (s.from_task === undefined) !== (s.from_tasks === undefined), {
    message: 'a source names exactly one of from_task and from_tasks (Layer 2 §3)',
  });

/** An input reference: `{source}` and no `type` (Layer 2 §1.1: the two forms are mutually exclusive). */
export const InputReferenceSchema = z.strictObject({ source: InputSourceSchema });
export type InputReference = z.infer<typeof InputReferenceSchema>;

/** A task's `input`: a literal `{type, data}` (without `source`) or an input reference (Layer 2 §1.1). */
const DagInputSchema = z.union([
  InputReferenceSchema,
  PayloadSchema.refine((p) => !('source' in p), {
    message: 'an input has either type/data (literal) or source (reference), never both (Layer 2 §1.1)',
  }),
]);
export type DagInput = InputReference | Payload;

/** A Task object inside a DAG (Layer 2 §1 "Task Schema"), plus the buyer-side `provider` and `binding`. */
export const DagTaskSchema = z.looseObject({
  task_id: z.string().min(1).max(128),
  capability: z.string().min(1),
  input: DagInputSchema,
  output_type: z.string().min(1).optional(),
  input_tokens_est: z.int().nonnegative().optional(),
  max_price_cu: z.number().nonnegative().optional(),
  preferred_tier: z.string().optional(),
  metadata: z.record(z.string(), z.json()).optional(),
  timeout_ms: z.int().positive().optional(),
  stream: z.boolean().optional(),
  // §5 step 2: `input_stream: true` is the orchestrator's to set on a downstream it forwards chunks to;
  // this one never forwards (docs/acmp-dag.md "Streaming"), so a plan asking for it is refused before
  // money is spent (the buyer would refuse the node's invoke locally, -33007, after its upstream ran).
  input_stream: z
    .literal(false, {
      error: 'input_stream: true is refused: this runner sends no acmp/inputChunk (Layer 2 §5 fallback)',
    })
    .optional(),
  proof_method: z.string().min(1).optional(),
  escrow_id: z.string().min(1).optional(),
  offer_id: z.string().min(1).optional(),
  provider: z.url({ protocol: /^https?$/ }).optional(),
  binding: z.enum(DAG_BINDINGS).optional(),
});
export type DagTask = z.infer<typeof DagTaskSchema>;

/** An Edge object (Layer 2 §3 "Edge Schema"); `stream_eligible` defaults to false. */
export const DagEdgeSchema = z.looseObject({
  from: z.string().min(1),
  to: z.string().min(1),
  stream_eligible: z.boolean().optional(),
});
export type DagEdge = z.infer<typeof DagEdgeSchema>;

/** The most tasks and edges one DAG may hold (Layer 2 Open Questions leave limits open; docs/acmp-dag.md). */
const DAG_LIMITS = { tasks: 1000, edges: 10_000 } as const;

/** A DAG (Layer 2 §3 "DAG Schema"): `dag_id`, `tasks`, `edges` (which MAY be empty) are required. */
export const DagSchema = z.looseObject({
  dag_id: z.string().min(1).max(128),
  tasks: z.array(DagTaskSchema).min(1).max(DAG_LIMITS.tasks),
  edges: z.array(DagEdgeSchema).max(DAG_LIMITS.edges),
  budget_cu: z.number().nonnegative().optional(),
});
export type Dag = z.infer<typeof DagSchema>;

/** Whether a task input is an input reference (Layer 2 §1.1: the `source` key signals one). */
export function isInputReference(input: DagInput): input is InputReference {
  return 'source' in input;
}

/** The task ids an input reference reads, in the order `from_tasks` lists them. */
export function sourcesOf(input: DagInput): string[] {
  if (!isInputReference(input)) return [];
  const { from_task, from_tasks } = input.source;
  return from_task !== undefined ? [from_task] : [...(from_tasks ?? [])];
}

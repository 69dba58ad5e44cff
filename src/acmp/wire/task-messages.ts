import { z } from 'zod';
import { checkId } from '../../shared/id-rules.js';
import { DEFAULT_OUTPUT_TYPE, DEFAULT_TIMEOUT_MS } from './constants.js';

/*
 * The Layer 1 task messages (ACMP Layer 1 §3), written as zod schemas. Objects are "loose": unknown fields
 * pass through unchanged, so a message survives parse → JCS byte-identically (A2A binding §1,
 * "byte-identical"). Defaults are NOT applied by the schemas; use {@link resolveInvoke} to read a field
 * with its spec default. The rest of the code imports them through `messages.ts`, beside the roots.
 */

/** A `{type, data}` payload (Layer 1 §3.1 `input`, §3.2 `output`, §3.5 `chunk`). */
export const PayloadSchema = z.looseObject({ type: z.string().min(1), data: z.json() });
export type Payload = z.infer<typeof PayloadSchema>;

/**
 * The `task_id` of a new task: it is also the A2A task id, so it keeps the host's id rules
 * (src/shared/id-rules.ts) on every binding and store.
 */
const NewTaskIdSchema = z
  .string()
  .min(1)
  .superRefine((value, ctx) => {
    const problem = checkId('taskId', value, 'task_id');
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** `acmp/invoke` params (Layer 1 §3.1). `input` MAY be omitted only when `input_stream` is true. */
export const InvokeParamsSchema = z
  .looseObject({
    task_id: NewTaskIdSchema,
    capability: z.string().min(1),
    input: PayloadSchema.optional(),
    output_type: z.string().min(1).optional(),
    input_tokens_est: z.int().nonnegative().optional(),
    max_price_cu: z.number().nonnegative().optional(),
    preferred_tier: z.string().optional(),
    timeout_ms: z.int().positive().optional(),
    stream: z.boolean().optional(),
    input_stream: z.boolean().optional(),
    escrow_id: z.string().min(1).optional(),
    proof_method: z.string().min(1).optional(),
  })
  .refine((p) => p.input !== undefined || p.input_stream === true, {
    message: 'input is required unless input_stream is true',
    path: ['input'],
  });
export type InvokeParams = z.infer<typeof InvokeParamsSchema>;

/** `acmp/cancel` params (Layer 1 §3.7). */
export const CancelParamsSchema = z.looseObject({
  task_id: z.string().min(1),
  reason: z.string().optional(),
});
export type CancelParams = z.infer<typeof CancelParamsSchema>;

/** `acmp/streamChunk` params (Layer 1 §3.5). `final` absent reads as false. */
export const StreamChunkParamsSchema = z.looseObject({
  task_id: z.string().min(1),
  seq: z.int().nonnegative(),
  chunk: PayloadSchema,
  final: z.boolean().optional(),
});
export type StreamChunkParams = z.infer<typeof StreamChunkParamsSchema>;

/**
 * `acmp/inputChunk` params (Layer 1 §3.4); parsed so it can be declined with a precise code. The same
 * shape as a stream chunk, named apart because Layer 1 names the two messages apart.
 * @alias
 */
export const InputChunkParamsSchema = StreamChunkParamsSchema;
export type InputChunkParams = z.infer<typeof InputChunkParamsSchema>;

/** `acmp/heartbeat` params (Layer 1 §3.6). */
export const HeartbeatParamsSchema = z.looseObject({
  task_id: z.string().min(1),
  progress: z.number().min(0).max(1).optional(),
  detail: z.string().optional(),
});
export type HeartbeatParams = z.infer<typeof HeartbeatParamsSchema>;

/** A Layer 3 §2 proof envelope: `method` plus method-specific fields. */
export const ProofSchema = z.looseObject({ method: z.string().min(1) });
export type Proof = z.infer<typeof ProofSchema>;

/** The `acmp/result` object (Layer 1 §3.2). `output` may be omitted only when `output_streamed` is true. */
export const AcmpResultSchema = z
  .looseObject({
    task_id: z.string().min(1),
    output: PayloadSchema.optional(),
    output_streamed: z.boolean().optional(),
    tokens_used: z.int().nonnegative(),
    cost_cu: z.number().nonnegative(),
    proof: ProofSchema.optional(),
    provider_id: z.string().optional(),
  })
  .refine((r) => r.output !== undefined || r.output_streamed === true, {
    message: 'output is required unless output_streamed is true',
    path: ['output'],
  });
export type AcmpResult = z.infer<typeof AcmpResultSchema>;

/** Invoke params with the Layer 1 §3.1 defaults filled in, for reading only (never sent or hashed). */
export interface ResolvedInvoke {
  readonly outputType: string;
  readonly timeoutMs: number;
  readonly stream: boolean;
  readonly inputStream: boolean;
}

/** Reads the optional invoke fields with their spec defaults (Layer 1 §3.1 "Optional fields"). */
export function resolveInvoke(params: InvokeParams): ResolvedInvoke {
  return {
    outputType: params.output_type ?? DEFAULT_OUTPUT_TYPE,
    timeoutMs: params.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    stream: params.stream ?? false,
    inputStream: params.input_stream ?? false,
  };
}

import { z } from 'zod';
import { checkId, quoteId } from '../../shared/id-rules.js';
import { isJsonObject } from '../../shared/json.js';
import {
  ACMP_METHOD,
  DEFAULT_OUTPUT_TYPE,
  DEFAULT_TIMEOUT_MS,
  L6_METHOD,
  L7_METHOD,
  SESSION_METHOD,
  type AcmpMethod,
} from './constants.js';
import { ProveIdentityParamsSchema, type ProveIdentityParams } from './identity-messages.js';
import {
  AcceptParamsSchema,
  CounterOfferParamsSchema,
  OfferRequestParamsSchema,
  type AcceptParams,
  type CounterOfferParams,
  type OfferRequestParams,
} from './negotiation-messages.js';
import { ACMP_CODE, AcmpError, AcmpErrorObjectSchema, type AcmpErrorObject } from './errors.js';

/*
 * Zod schemas written from ACMP Layer 1 §3. Objects are "loose": unknown fields pass through unchanged,
 * so a message survives parse → JCS byte-identically (A2A binding §1, "byte-identical"). Defaults are
 * NOT applied by the schemas; use {@link resolveInvoke} to read a field with its spec default.
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

/** The `acmp/error` object (Layer 1 §3.3; JSON-RPC 2.0 error object). */
export { AcmpErrorObjectSchema, type AcmpErrorObject };

/** The `acmp` capability object (Layer 1 §1; the AgentExtension `params`, A2A binding §2). */
export const CapabilityObjectSchema = z.looseObject({
  version: z.string().min(1),
  role: z.string().min(1),
  // Layer 7 §2.2: the authoritative identity, and the self-reported alias beside it.
  did: z.string().startsWith('did:').optional(),
  provider_id: z.string().optional(),
  accepts: z.array(z.string()),
  emits: z.array(z.string()),
  features: z.looseObject({
    output_streaming: z.boolean().optional(),
    input_streaming: z.boolean().optional(),
    heartbeat_interval_ms: z.int().positive().optional(),
  }),
});
export type CapabilityObject = z.infer<typeof CapabilityObjectSchema>;

/** Params schema per method, used when a request/notification root is parsed. */
export const PARAMS_SCHEMA_BY_METHOD = {
  [ACMP_METHOD.invoke]: InvokeParamsSchema,
  [ACMP_METHOD.cancel]: CancelParamsSchema,
  [ACMP_METHOD.streamChunk]: StreamChunkParamsSchema,
  [ACMP_METHOD.heartbeat]: HeartbeatParamsSchema,
  [ACMP_METHOD.inputChunk]: InputChunkParamsSchema,
  [L6_METHOD.offerRequest]: OfferRequestParamsSchema,
  [L6_METHOD.accept]: AcceptParamsSchema,
  [SESSION_METHOD.counterOffer]: CounterOfferParamsSchema,
  [L7_METHOD.proveIdentity]: ProveIdentityParamsSchema,
} as const;

/**
 * One message from the provider to the buyer, as both cores see it: notifications, then exactly one
 * terminal `result` or `error`.
 */
export type AcmpEvent =
  | { kind: 'chunk'; params: StreamChunkParams }
  | { kind: 'heartbeat'; params: HeartbeatParams }
  | { kind: 'result'; result: AcmpResult }
  | { kind: 'error'; error: AcmpErrorObject };

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

// ---- A2A binding data-Part roots (A2A binding §1) ----

/** A parsed A2A-binding data-Part root (A2A binding §1). */
export type AcmpRoot =
  | { kind: 'request'; method: typeof ACMP_METHOD.invoke; params: InvokeParams }
  | { kind: 'request'; method: typeof ACMP_METHOD.cancel; params: CancelParams }
  | { kind: 'request'; method: typeof ACMP_METHOD.streamChunk; params: StreamChunkParams }
  | { kind: 'request'; method: typeof ACMP_METHOD.heartbeat; params: HeartbeatParams }
  | { kind: 'request'; method: typeof ACMP_METHOD.inputChunk; params: InputChunkParams }
  | { kind: 'request'; method: typeof L6_METHOD.offerRequest; params: OfferRequestParams }
  | { kind: 'request'; method: typeof L6_METHOD.accept; params: AcceptParams }
  | { kind: 'request'; method: typeof SESSION_METHOD.counterOffer; params: CounterOfferParams }
  | { kind: 'request'; method: typeof L7_METHOD.proveIdentity; params: ProveIdentityParams }
  | { kind: 'result'; result: AcmpResult }
  | { kind: 'error'; error: AcmpErrorObject };

const METHODS = new Set<string>([
  ...Object.values(ACMP_METHOD),
  ...Object.values(L6_METHOD),
  ...Object.values(SESSION_METHOD),
  ...Object.values(L7_METHOD),
]);
const MAX_ISSUES = 10;

function issuesOf(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.slice(0, MAX_ISSUES).map((i) => ({ path: i.path.join('.'), message: i.message }));
}

/** How a value that fails its schema is refused: the error code and the `data` fields besides `issues`. */
interface Refusal {
  readonly code: number;
  readonly data: Record<string, unknown>;
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown, refusal: Refusal): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new AcmpError(refusal.code, { ...refusal.data, issues: issuesOf(parsed.error) });
}

/** The task_id of a params object, when there is a usable one (for error `data`; at most a prefix). */
function taskIdOf(params: unknown): Record<string, unknown> {
  return isJsonObject(params) && typeof params.task_id === 'string'
    ? { task_id: quoteId(params.task_id) }
    : {};
}

/**
 * Parses `acmp/invoke` params (Layer 1 §3.1).
 * @throws AcmpError -32602 with `data.issues` (paths and messages, never values).
 */
export function parseInvokeParams(value: unknown): InvokeParams {
  return parseWith(InvokeParamsSchema, value, { code: ACMP_CODE.invalidParams, data: taskIdOf(value) });
}

/**
 * Parses `acmp/cancel` params (Layer 1 §3.7).
 * @throws AcmpError -32602.
 */
export function parseCancelParams(value: unknown): CancelParams {
  return parseWith(CancelParamsSchema, value, { code: ACMP_CODE.invalidParams, data: taskIdOf(value) });
}

/**
 * Parses `acmp/offerRequest` params (L6 §2.1) where a binding carries them bare (MCP).
 * @throws AcmpError -32602 with `data.issues`.
 */
export function parseOfferRequestParams(value: unknown): OfferRequestParams {
  return parseWith(OfferRequestParamsSchema, value, { code: ACMP_CODE.invalidParams, data: {} });
}

/**
 * Parses `acmp/accept` params (L6 §2.2) where a binding carries them bare (MCP).
 * @throws AcmpError -32602 with `data.issues`.
 */
export function parseAcceptParams(value: unknown): AcceptParams {
  return parseWith(AcceptParamsSchema, value, { code: ACMP_CODE.invalidParams, data: {} });
}

/**
 * Parses a data-Part root of the A2A binding (§1): exactly one of `{acmp_method, params}`,
 * `{acmp_result}`, `{acmp_error}`.
 * @throws AcmpError -32600 when the root is not one of those shapes (missing/extra/several root keys,
 *   malformed result/error body), -32601 for an unknown `acmp_method`, -32602 for invalid params.
 */
export function parseAcmpRoot(value: unknown): AcmpRoot {
  if (!isJsonObject(value))
    throw new AcmpError(ACMP_CODE.invalidRequest, { detail: 'root is not an object' });
  const keys = Object.keys(value);
  if ('acmp_method' in value) {
    if (keys.length !== 2 || !('params' in value)) {
      throw new AcmpError(ACMP_CODE.invalidRequest, { detail: 'root must be exactly {acmp_method, params}' });
    }
    const method = value.acmp_method;
    if (typeof method !== 'string' || !METHODS.has(method)) throw new AcmpError(ACMP_CODE.methodNotFound);
    const acmpMethod = method as keyof typeof PARAMS_SCHEMA_BY_METHOD;
    const params = parseWith(PARAMS_SCHEMA_BY_METHOD[acmpMethod] as z.ZodType<unknown>, value.params, {
      code: ACMP_CODE.invalidParams,
      data: taskIdOf(value.params),
    });
    return { kind: 'request', method: acmpMethod, params } as AcmpRoot;
  }
  if (keys.length !== 1) {
    throw new AcmpError(ACMP_CODE.invalidRequest, { detail: 'root must have exactly one ACMP root key' });
  }
  if ('acmp_result' in value) {
    const result = parseWith(AcmpResultSchema, value.acmp_result, {
      code: ACMP_CODE.invalidRequest,
      data: {},
    });
    return { kind: 'result', result };
  }
  if ('acmp_error' in value) {
    const error = parseWith(AcmpErrorObjectSchema, value.acmp_error, {
      code: ACMP_CODE.invalidRequest,
      data: {},
    });
    return { kind: 'error', error };
  }
  throw new AcmpError(ACMP_CODE.invalidRequest, { detail: 'unknown root key' });
}

/** Builds a request/notification root `{acmp_method, params}` (A2A binding §1). */
export function encodeRequestRoot(
  method: AcmpMethod,
  params: object,
): { acmp_method: AcmpMethod; params: object } {
  return { acmp_method: method, params };
}

/** Builds a result root `{acmp_result}` (A2A binding §1). */
export function encodeResultRoot(result: AcmpResult): { acmp_result: AcmpResult } {
  return { acmp_result: result };
}

/** Builds an error root `{acmp_error}` (A2A binding §1). */
export function encodeErrorRoot(error: AcmpErrorObject): { acmp_error: AcmpErrorObject } {
  return { acmp_error: error };
}

/** The binding's data-Part root for a provider event (A2A binding §1): notification, result or error. */
export function encodeEventRoot(event: AcmpEvent): object {
  switch (event.kind) {
    case 'chunk':
      return encodeRequestRoot(ACMP_METHOD.streamChunk, event.params);
    case 'heartbeat':
      return encodeRequestRoot(ACMP_METHOD.heartbeat, event.params);
    case 'result':
      return encodeResultRoot(event.result);
    case 'error':
      return encodeErrorRoot(event.error);
  }
}

/** The provider event a parsed root carries, or undefined for a buyer→provider request. */
export function eventOfRoot(root: AcmpRoot): AcmpEvent | undefined {
  if (root.kind === 'result') return { kind: 'result', result: root.result };
  if (root.kind === 'error') return { kind: 'error', error: root.error };
  if (root.method === ACMP_METHOD.streamChunk) return { kind: 'chunk', params: root.params };
  if (root.method === ACMP_METHOD.heartbeat) return { kind: 'heartbeat', params: root.params };
  return undefined;
}

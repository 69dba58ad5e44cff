import { z } from 'zod';
import { quoteId } from '../../shared/id-rules.js';
import { isJsonObject } from '../../shared/json.js';
import { ACMP_METHOD, L6_METHOD, L7_METHOD, SESSION_METHOD, type AcmpMethod } from './constants.js';
import { CapabilityObjectSchema, type CapabilityObject } from './capability-object.js';
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
import {
  AcmpResultSchema,
  CancelParamsSchema,
  HeartbeatParamsSchema,
  InputChunkParamsSchema,
  InvokeParamsSchema,
  StreamChunkParamsSchema,
  type AcmpResult,
  type CancelParams,
  type HeartbeatParams,
  type InputChunkParams,
  type InvokeParams,
  type StreamChunkParams,
} from './task-messages.js';

/*
 * The ACMP messages as the rest of the code reads them: the A2A binding's data-Part roots (A2A binding §1)
 * parsed into typed requests, results and errors, and built back. The Layer 1 schemas they carry are in
 * `task-messages.ts`, the capability object in `capability-object.ts`.
 */

/** The `acmp/error` object (Layer 1 §3.3; JSON-RPC 2.0 error object). */
export { AcmpErrorObjectSchema, type AcmpErrorObject };

/** The `acmp` capability object (Layer 1 §1; the AgentExtension `params`, A2A binding §2). */
export { CapabilityObjectSchema, type CapabilityObject };

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

type RequestRoot = Extract<AcmpRoot, { kind: 'request' }>;
type RequestMethod = RequestRoot['method'];
type RequestRootOf<M extends RequestMethod> = Extract<RequestRoot, { method: M }>;

const MAX_ISSUES = 10;

function issuesOf(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.slice(0, MAX_ISSUES).map((i) => ({ path: i.path.join('.'), message: i.message }));
}

/** How a value that fails its schema is refused: the code, and what `data` adds besides the issues. */
interface Refusal {
  readonly code: number;
  /** Built only on a refusal: a parse that succeeds allocates nothing for it. */
  readonly data?: () => Record<string, unknown>;
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown, refusal: Refusal): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new AcmpError(refusal.code, { ...refusal.data?.(), issues: issuesOf(parsed.error) });
}

/** The task_id of a params object, when there is a usable one (for error `data`; at most a prefix). */
function taskIdOf(params: unknown): Record<string, unknown> {
  return isJsonObject(params) && typeof params.task_id === 'string'
    ? { task_id: quoteId(params.task_id) }
    : {};
}

/** Parses a method's params: -32602 with the params' task_id (when usable) and the issues. */
function parseParams<T>(schema: z.ZodType<T>, params: unknown): T {
  return parseWith(schema, params, { code: ACMP_CODE.invalidParams, data: () => taskIdOf(params) });
}

/** The params schema of each request method, typed by the root it parses to. */
const SCHEMA_OF: { readonly [M in RequestMethod]: z.ZodType<RequestRootOf<M>['params']> } =
  PARAMS_SCHEMA_BY_METHOD;

/** The decoder of one request method: its params parsed into its typed root. */
function requestDecoder<M extends RequestMethod>(
  method: M,
): (params: unknown) => { kind: 'request'; method: M; params: RequestRootOf<M>['params'] } {
  const schema = SCHEMA_OF[method];
  return (params) => ({ kind: 'request', method, params: parseParams(schema, params) });
}

/**
 * One decoder per request method, each checked against its {@link AcmpRoot} member; a `Map`, so a
 * method name such as `toString` finds nothing.
 */
const DECODER_OF_METHOD = new Map<string, (params: unknown) => RequestRoot>(
  Object.entries({
    [ACMP_METHOD.invoke]: requestDecoder(ACMP_METHOD.invoke),
    [ACMP_METHOD.cancel]: requestDecoder(ACMP_METHOD.cancel),
    [ACMP_METHOD.streamChunk]: requestDecoder(ACMP_METHOD.streamChunk),
    [ACMP_METHOD.heartbeat]: requestDecoder(ACMP_METHOD.heartbeat),
    [ACMP_METHOD.inputChunk]: requestDecoder(ACMP_METHOD.inputChunk),
    [L6_METHOD.offerRequest]: requestDecoder(L6_METHOD.offerRequest),
    [L6_METHOD.accept]: requestDecoder(L6_METHOD.accept),
    [SESSION_METHOD.counterOffer]: requestDecoder(SESSION_METHOD.counterOffer),
    [L7_METHOD.proveIdentity]: requestDecoder(L7_METHOD.proveIdentity),
  } satisfies { readonly [M in RequestMethod]: (params: unknown) => RequestRootOf<M> }),
);

/**
 * Parses `acmp/invoke` params (Layer 1 §3.1).
 * @throws AcmpError -32602 with `data.issues` (paths and messages, never values).
 */
export function parseInvokeParams(value: unknown): InvokeParams {
  return parseParams(InvokeParamsSchema, value);
}

/**
 * Parses `acmp/cancel` params (Layer 1 §3.7).
 * @throws AcmpError -32602.
 */
export function parseCancelParams(value: unknown): CancelParams {
  return parseParams(CancelParamsSchema, value);
}

/**
 * Parses `acmp/offerRequest` params (L6 §2.1) where a binding carries them bare (MCP).
 * @throws AcmpError -32602 with `data.issues`.
 */
export function parseOfferRequestParams(value: unknown): OfferRequestParams {
  return parseWith(OfferRequestParamsSchema, value, { code: ACMP_CODE.invalidParams });
}

/**
 * Parses `acmp/accept` params (L6 §2.2) where a binding carries them bare (MCP).
 * @throws AcmpError -32602 with `data.issues`.
 */
export function parseAcceptParams(value: unknown): AcceptParams {
  return parseWith(AcceptParamsSchema, value, { code: ACMP_CODE.invalidParams });
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
    const decode = typeof method === 'string' ? DECODER_OF_METHOD.get(method) : undefined;
    if (decode === undefined) throw new AcmpError(ACMP_CODE.methodNotFound);
    return decode(value.params);
  }
  if (keys.length !== 1) {
    throw new AcmpError(ACMP_CODE.invalidRequest, { detail: 'root must have exactly one ACMP root key' });
  }
  if ('acmp_result' in value) {
    const result = parseWith(AcmpResultSchema, value.acmp_result, { code: ACMP_CODE.invalidRequest });
    return { kind: 'result', result };
  }
  if ('acmp_error' in value) {
    const error = parseWith(AcmpErrorObjectSchema, value.acmp_error, { code: ACMP_CODE.invalidRequest });
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

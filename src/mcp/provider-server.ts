import { SdkError, SdkErrorCode, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Span } from '@opentelemetry/api';
import { ACMP_METHOD, L6_METHOD, L7_METHOD } from '../acmp/wire/constants.js';
import { ProveIdentityParamsSchema } from '../acmp/wire/identity-messages.js';
import { encodeInvokeRequest } from '../acmp/provider/stored-request.js';
import { ACMP_CODE, AcmpError, toAcmpErrorObject } from '../acmp/wire/errors.js';
import { parseAcceptParams, parseCancelParams, parseOfferRequestParams } from '../acmp/wire/messages.js';
import { CancelParamsSchema, type AcmpResult } from '../acmp/wire/task-messages.js';
import { parseInvoke, type ParsedInvoke } from '../acmp/provider/provider-checks.js';
import type { AcmpProvider, Admission } from '../acmp/provider/provider-types.js';
import type { TaskScope } from '../acmp/provider/task-store.js';
import { quoteId } from '../shared/id-rules.js';
import { systemIds, type IdSource } from '../shared/ids.js';
import { checkJsonValue, JSON_LIMITS } from '../shared/json-edge.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { isJsonObject } from '../shared/json.js';
import { TRACE_ATTR, failSpan, startServerSpan, withSpan } from '../shared/tracing.js';
import { acmpMcpCapabilities } from './acmp-extension.js';
import type { McpContribution } from './contribution.js';
import { outsideProfile } from './profile-error.js';

/** Options of {@link createAcmpMcpContribution}. */
export interface AcmpMcpOptions {
  provider: AcmpProvider;
  /** Aborted when the host begins to stop: closed connections then detach (the work drains) instead of cancelling. */
  stopping?: AbortSignal;
  ids?: IdSource;
  logger?: Logger;
}

/** What one instance's ACMP methods run with: the options, and whether a closed connection cancels. */
interface AcmpMethodOptions extends AcmpMcpOptions {
  /**
   * True on Streamable HTTP, where closing a request's SSE stream IS its cancellation (MCP 2026-07-28
   * basic/patterns/cancellation); false on stdio, where only `notifications/cancelled` is.
   */
  connectionCloseCancels: boolean;
}

/** Custom-method params are ACMP objects; the SDK hands them over unvalidated and the ACMP schemas judge them. */
const RawParams = z.looseObject({});

/**
 * ACMP over MCP as a contribution to the host's MCP server (Layer 1 §1–§3 over MCP,
 * docs/acmp-mcp-binding.md): each instance advertises the provider's capability object as the
 * `org.a2agora/acmp` extension and serves `acmp/invoke` (a request whose SSE stream carries
 * `acmp/streamChunk` and `acmp/heartbeat`) and `acmp/cancel` through the one provider, so every binding
 * shares its task records. The caller of the instance scopes every task exactly as over A2A.
 */
export function createAcmpMcpContribution(options: AcmpMcpOptions): McpContribution {
  const capabilityIds = options.provider.capabilities.map((c) => c.id).join(', ');
  return {
    // Read per server: the capability object carries the host's did:web, known once the host listens.
    capabilities: (serving) => acmpMcpCapabilities(options.provider.capabilityObject, serving.era),
    get instructions() {
      const { version } = options.provider.capabilityObject;
      return (
        `ACMP provider (extension org.a2agora/acmp, ACMP ${version}). ` +
        `Buy compute with the acmp/invoke request; capabilities: ${capabilityIds}.`
      );
    },
    register: (mcp, call) => {
      const methodOptions = { ...options, connectionCloseCancels: call.transport === 'http' };
      new AcmpMcpMethods(methodOptions, { tenant: '', agent: call.caller }).register(mcp);
    },
    // Every method AcmpMcpMethods registers is in ACMP's namespace (Layer 1 §1, Layer 6, Layer 7).
    serves: (method) => method.startsWith('acmp/'),
  };
}

/** The ACMP methods of one MCP server instance, for one caller. */
class AcmpMcpMethods {
  private readonly provider: AcmpProvider;
  private readonly ids: IdSource;
  private readonly logger: Logger;

  constructor(
    private readonly options: AcmpMethodOptions,
    private readonly scope: TaskScope,
  ) {
    this.provider = options.provider;
    this.ids = options.ids ?? systemIds;
    this.logger = options.logger ?? silentLogger;
  }

  register(mcp: McpServer): void {
    const server = mcp.server;
    server.setRequestHandler(ACMP_METHOD.invoke, { params: RawParams }, (params, ctx) =>
      this.guard({ method: ACMP_METHOD.invoke, params }, () => this.invoke(params, ctx)),
    );
    // Layer 1 §3.7: acmp/cancel is a notification; the request form is also answered, for clients whose
    // SDK prefers requests (an empty result once the cancel is stored, -32602 for an unknown task).
    server.setNotificationHandler(ACMP_METHOD.cancel, { params: RawParams }, (params) =>
      this.cancelNotification(params),
    );
    server.setRequestHandler(ACMP_METHOD.cancel, { params: RawParams }, (params) =>
      this.guard({ method: ACMP_METHOD.cancel, params }, () => this.cancelRequest(params)),
    );
    // Layer 7 §3: answered whatever the caller; -32601 when the provider has no DID.
    server.setRequestHandler(L7_METHOD.proveIdentity, { params: RawParams }, (params, ctx) =>
      this.guard({ method: L7_METHOD.proveIdentity, params }, () => this.proveIdentity(params, ctx)),
    );
    // Layer 1 §1: acmp/inputChunk is not in `accepts`; as a notification it is ignored (MCP answers none),
    // as a request it is refused like over A2A.
    server.setRequestHandler(ACMP_METHOD.inputChunk, { params: RawParams }, () =>
      Promise.reject(new AcmpError(ACMP_CODE.featureUnsupported, { feature: 'input_streaming' })),
    );
    // Layer 6 (flat): the capability object lists these methods when the provider negotiates, and Layer 1
    // §1 has a provider serve what it advertises. The same negotiator and caller scope as over A2A, so an
    // offer quoted on one binding is accepted and executed on either (docs/acmp-mcp-binding.md §3).
    if (this.provider.capabilityObject.accepts.includes(L6_METHOD.offerRequest)) {
      server.setRequestHandler(L6_METHOD.offerRequest, { params: RawParams }, (params) =>
        this.guard({ method: L6_METHOD.offerRequest, params }, () =>
          this.provider.quote(parseOfferRequestParams(withinProfile(params)), this.scope),
        ),
      );
      server.setRequestHandler(L6_METHOD.accept, { params: RawParams }, (params) =>
        this.guard({ method: L6_METHOD.accept, params }, () =>
          this.provider.accept(parseAcceptParams(withinProfile(params)), this.scope),
        ),
      );
    }
  }

  /** `acmp/invoke` (Layer 1 §3.1): notifications on this request's stream, then the result or error. */
  private async invoke(raw: Record<string, unknown>, ctx: ServerContext): Promise<AcmpResult> {
    // The task id's rules are the invoke schema's (src/shared/id-rules.ts), as over A2A.
    const invoke = parseInvoke(withinProfile(raw));
    const taskId = invoke.params.task_id;
    const detach = new AbortController();
    const admission = await this.admit(invoke, detach.signal);
    if (admission.kind === 'refused') throw AcmpError.fromObject(admission.error);
    const signal = ctx.mcpReq.signal;
    let finished = false;
    const onAbort = (): void => {
      detach.abort();
      if (!finished && this.cancels(signal.reason)) void this.cancelTask(taskId);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    try {
      for await (const event of admission.events) {
        switch (event.kind) {
          case 'chunk':
            await ctx.mcpReq.notify({ method: ACMP_METHOD.streamChunk, params: event.params });
            break;
          case 'heartbeat':
            await ctx.mcpReq.notify({ method: ACMP_METHOD.heartbeat, params: event.params });
            break;
          case 'result':
            finished = true;
            return event.result;
          case 'error':
            finished = true;
            throw AcmpError.fromObject(event.error);
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    // Detached (the request was cancelled or the host stops): the SDK sends nothing for an aborted request.
    throw new AcmpError(ACMP_CODE.internal);
  }

  /** `acmp/proveIdentity` (Layer 7 §3): the provider signs `{nonce, did}`. */
  private async proveIdentity(
    raw: Record<string, unknown>,
    ctx: ServerContext,
  ): Promise<Record<string, unknown>> {
    const parsed = ProveIdentityParamsSchema.safeParse(withinProfile(raw));
    if (!parsed.success) {
      throw new AcmpError(ACMP_CODE.invalidParams, {
        detail: 'params must be {nonce}: a string of 1 to 256 characters',
      });
    }
    return await this.provider.proveIdentity(parsed.data, { signal: ctx.mcpReq.signal });
  }

  private admit(invoke: ParsedInvoke, signal: AbortSignal): Promise<Admission> {
    const request = encodeInvokeRequest(invoke.params);
    return this.provider.admit(
      { invoke, scope: this.scope, contextId: this.ids.newId('ctx'), request },
      { canStream: true, signal },
    );
  }

  /**
   * Whether an aborted request is a cancellation of its task: `notifications/cancelled` always is; a closed
   * connection is on Streamable HTTP, not on stdio; nothing is while the host stops (the work drains and a
   * retry replays it, docs/acmp-mcp-binding.md §6).
   */
  private cancels(reason: unknown): boolean {
    if (this.options.stopping?.aborted === true) return false;
    const closed = reason instanceof SdkError && reason.code === SdkErrorCode.ConnectionClosed;
    return !closed || this.options.connectionCloseCancels;
  }

  private async cancelNotification(raw: Record<string, unknown>): Promise<void> {
    // MCP: an invalid or unknown notification is ignored; there is no one to answer.
    const params = withoutMeta(raw);
    if (checkJsonValue(params, PARAMS_MAX_DEPTH) !== undefined) return;
    const parsed = CancelParamsSchema.safeParse(params);
    if (parsed.success) await this.cancelTask(parsed.data.task_id);
  }

  private async cancelRequest(raw: Record<string, unknown>): Promise<Record<string, never>> {
    const { task_id: taskId } = parseCancelParams(withinProfile(raw));
    // An id no store could hold is unknown too (the provider answers without a lookup).
    const outcome = await this.provider.cancelTask(taskId, this.scope, 'completed');
    if (outcome.kind === 'unknown')
      throw new AcmpError(ACMP_CODE.invalidParams, { task_id: quoteId(taskId), detail: 'unknown task' });
    return {};
  }

  /** Layer 1 §3.7 through the record: the -33004 outcome is stored at once, the owner stops the work. */
  private async cancelTask(taskId: string): Promise<void> {
    try {
      await this.provider.cancelTask(taskId, this.scope, 'completed');
    } catch (error) {
      this.logger.error('acmp.mcp_cancel_failed', { task_id: taskId, ...errorFields(error) });
    }
  }

  /**
   * The one mapper on the way out (STYLE.md "Errors"): the SDK puts a thrown error's code, message and data
   * on the wire, so only ACMP error objects leave here; anything else becomes -33099 (cause logged).
   */
  private async guard<T>(
    request: { method: string; params: Record<string, unknown> },
    call: () => Promise<T>,
  ): Promise<T> {
    const span = mcpCallSpan(request.method, request.params);
    try {
      return await withSpan(span, call);
    } catch (error) {
      if (!(error instanceof AcmpError)) this.logger.error('acmp.mcp_call_failed', errorFields(error));
      const object = toAcmpErrorObject(error);
      failSpan(span, {
        [TRACE_ATTR.acmpErrorCode]: object.code,
        [TRACE_ATTR.errorType]: String(object.code),
      });
      throw AcmpError.fromObject(object);
    } finally {
      span.end();
    }
  }
}

/**
 * The SERVER span of one MCP call (docs/operations.md "Tracing"), named after its method: its parent the
 * trace context of the call's `_meta` (`traceparent`, `tracestate`, the MCP convention, which stdio
 * callers can use too), else the active one (the HTTP request's headers, src/mcp/http-endpoint.ts).
 */
function mcpCallSpan(method: string, params: Record<string, unknown>): Span {
  const meta = params._meta;
  const carrier =
    isJsonObject(meta) && typeof meta.traceparent === 'string'
      ? {
          traceparent: meta.traceparent,
          tracestate: typeof meta.tracestate === 'string' ? meta.tracestate : undefined,
        }
      : undefined;
  const span = startServerSpan(method, carrier, { [TRACE_ATTR.mcpMethod]: method });
  if (span.isRecording()) {
    if (typeof params.task_id === 'string') span.setAttribute(TRACE_ATTR.acmpTaskId, params.task_id);
    if (typeof params.capability === 'string')
      span.setAttribute(TRACE_ATTR.acmpCapability, params.capability);
  }
  return span;
}

/**
 * ACMP params without MCP's `_meta` (the request envelope, progress tokens): MCP material, never part of
 * the ACMP message, so a task's identity hash is the same on every binding.
 */
function withoutMeta(params: Record<string, unknown>): Record<string, unknown> {
  if (!('_meta' in params)) return params;
  const copy = { ...params };
  delete copy._meta;
  return copy;
}

/**
 * How deep a request's params may nest: they sit at depth 2 of the JSON-RPC message, so this is the
 * host's limit counted from the message, as the A2A edge counts it from the body.
 */
const PARAMS_MAX_DEPTH = JSON_LIMITS.maxDepth - 1;

/**
 * ACMP params without `_meta`, held to the host's value profile (src/shared/json-edge.ts: depth, U+0000,
 * lone surrogates, exact numbers) exactly as on the A2A bindings, before any schema, hash or store sees
 * them.
 * @throws AcmpError -32602 naming the rule broken (`data.rule`).
 */
function withinProfile(params: Record<string, unknown>): Record<string, unknown> {
  const problem = checkJsonValue(params, PARAMS_MAX_DEPTH);
  if (problem) throw outsideProfile(problem);
  return withoutMeta(params);
}

import {
  McpServer,
  SdkError,
  SdkErrorCode,
  type McpRequestContext,
  type McpServerFactory,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ACMP_METHOD, L6_METHOD } from '../acmp/constants.js';
import { encodeInvokeRequest } from '../acmp/stored-request.js';
import { ACMP_CODE, AcmpError, toAcmpErrorObject } from '../acmp/errors.js';
import {
  CancelParamsSchema,
  parseAcceptParams,
  parseCancelParams,
  parseOfferRequestParams,
  type AcmpResult,
} from '../acmp/messages.js';
import { parseInvoke, type ParsedInvoke } from '../acmp/provider-checks.js';
import type { AcmpProvider, Admission } from '../acmp/provider-types.js';
import type { TaskScope } from '../acmp/task-store.js';
import { systemIds, type IdSource } from '../shared/ids.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { acmpMcpCapabilities, MAX_TASK_ID_LENGTH } from './acmp-extension.js';

/** Options of {@link createAcmpMcpFactory}. */
export interface AcmpMcpServerOptions {
  provider: AcmpProvider;
  /** `serverInfo` of every answer. */
  serverInfo: { name: string; version: string };
  /** The caller of one request (HTTP: from the credential) or of the whole stdio connection. */
  scopeOf(context: McpRequestContext): TaskScope;
  /**
   * Whether a closed connection cancels the requests it carried: true on Streamable HTTP, where closing a
   * request's SSE stream IS its cancellation (MCP 2026-07-28 basic/patterns/cancellation); false on stdio,
   * where only `notifications/cancelled` is.
   */
  connectionCloseCancels: boolean;
  /** Aborted when the host begins to stop: closed connections then detach (the work drains) instead of cancelling. */
  stopping?: AbortSignal;
  ids?: IdSource;
  logger?: Logger;
}

/**
 * `server/discover` may be cached as long as the A2A card (its `Cache-Control: max-age=300`): the capability
 * object changes only when the host restarts, and it is the same for every caller.
 */
const DISCOVER_CACHE = { ttlMs: 300_000, cacheScope: 'public' } as const;

/** Custom-method params are ACMP objects; the SDK hands them over unvalidated and the ACMP schemas judge them. */
const RawParams = z.looseObject({});

/**
 * The MCP server factory of an ACMP provider (Layer 1 §1–§3 over MCP, docs/acmp-mcp-binding.md): a fresh
 * server per HTTP request or stdio connection, advertising the provider's capability object as the
 * `org.a2agora/acmp` extension, serving `acmp/invoke` (a request whose SSE stream carries
 * `acmp/streamChunk` and `acmp/heartbeat`) and `acmp/cancel` through the one provider, so every binding
 * shares its task records.
 */
export function createAcmpMcpFactory(options: AcmpMcpServerOptions): McpServerFactory {
  const capabilityIds = options.provider.capabilities.map((c) => c.id).join(', ');
  const instructions =
    `ACMP provider (extension org.a2agora/acmp, ACMP ${options.provider.capabilityObject.version}). ` +
    `Buy compute with the acmp/invoke request; capabilities: ${capabilityIds}.`;
  return (context) => {
    const mcp = new McpServer(options.serverInfo, {
      capabilities: acmpMcpCapabilities(options.provider.capabilityObject, context.era),
      instructions,
      cacheHints: { 'server/discover': DISCOVER_CACHE },
    });
    new AcmpMcpMethods(options, options.scopeOf(context)).register(mcp);
    return mcp;
  };
}

/** The ACMP methods of one MCP server instance, for one caller. */
class AcmpMcpMethods {
  private readonly provider: AcmpProvider;
  private readonly ids: IdSource;
  private readonly logger: Logger;

  constructor(
    private readonly options: AcmpMcpServerOptions,
    private readonly scope: TaskScope,
  ) {
    this.provider = options.provider;
    this.ids = options.ids ?? systemIds;
    this.logger = options.logger ?? silentLogger;
  }

  register(mcp: McpServer): void {
    const server = mcp.server;
    server.setRequestHandler(ACMP_METHOD.invoke, { params: RawParams }, (params, ctx) =>
      this.guard(() => this.invoke(params, ctx)),
    );
    // Layer 1 §3.7: acmp/cancel is a notification; the request form is also answered, for clients whose
    // SDK prefers requests (an empty result once the cancel is stored, -32602 for an unknown task).
    server.setNotificationHandler(ACMP_METHOD.cancel, { params: RawParams }, (params) =>
      this.cancelNotification(params),
    );
    server.setRequestHandler(ACMP_METHOD.cancel, { params: RawParams }, (params) =>
      this.guard(() => this.cancelRequest(params)),
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
        this.guard(() => this.provider.quote(parseOfferRequestParams(withoutMeta(params)), this.scope)),
      );
      server.setRequestHandler(L6_METHOD.accept, { params: RawParams }, (params) =>
        this.guard(() => this.provider.accept(parseAcceptParams(withoutMeta(params)), this.scope)),
      );
    }
  }

  /** `acmp/invoke` (Layer 1 §3.1): notifications on this request's stream, then the result or error. */
  private async invoke(raw: Record<string, unknown>, ctx: ServerContext): Promise<AcmpResult> {
    const invoke = parseInvoke(withoutMeta(raw));
    const taskId = invoke.params.task_id;
    if (taskId.length > MAX_TASK_ID_LENGTH) {
      throw new AcmpError(ACMP_CODE.invalidParams, {
        detail: `task_id is longer than ${MAX_TASK_ID_LENGTH} characters`,
      });
    }
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
    const parsed = CancelParamsSchema.safeParse(withoutMeta(raw));
    if (parsed.success) await this.cancelTask(parsed.data.task_id);
  }

  private async cancelRequest(raw: Record<string, unknown>): Promise<Record<string, never>> {
    const { task_id: taskId } = parseCancelParams(withoutMeta(raw));
    const outcome = await this.provider.cancelTask(taskId, this.scope, 'completed');
    if (outcome.kind === 'unknown')
      throw new AcmpError(ACMP_CODE.invalidParams, { task_id: taskId, detail: 'unknown task' });
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
  private async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof AcmpError)) this.logger.error('acmp.mcp_call_failed', errorFields(error));
      throw AcmpError.fromObject(toAcmpErrorObject(error));
    }
  }
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

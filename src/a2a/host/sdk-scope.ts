import { AsyncLocalStorage } from 'node:async_hooks';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { A2AError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { isJsonObject } from '../../shared/json.js';
import { errorFields, type Logger } from '../../shared/logger.js';
import { HOST_ERROR_DOMAIN, HOST_ERRORS } from './wire-errors.js';

/**
 * What the host knows about one A2A request while the SDK handles it: where diagnostics go, and whether
 * the SDK got as far as calling the host's request handler (so that an SDK failure before that point —
 * its decoders throwing on the client's input — is told apart from one after it).
 */
interface SdkScope {
  logger: Logger;
  reached: boolean;
}

const scopes = new AsyncLocalStorage<SdkScope>();

/**
 * Runs the rest of an A2A request inside a scope and guards the SDK's JSON replies (see
 * {@link guardSdkReply}). Mounted right before the SDK's transport handler.
 */
export function sdkScope(logger: Logger, shape: 'jsonrpc' | 'rest'): RequestHandler {
  return (_req: Request, res: Response, next: NextFunction) => {
    const scope: SdkScope = { logger, reached: false };
    const json = res.json.bind(res);
    res.json = (body: unknown) => json(guardSdkReply(body, res, { scope, shape }));
    scopes.run(scope, next);
  };
}

/**
 * Runs a call of another transport (gRPC) inside a scope, so the SDK's diagnostics during it go to the
 * host's JSON logger exactly as on HTTP (see {@link routeSdkConsole}).
 */
export function inSdkScope<T>(logger: Logger, run: () => T): T {
  return scopes.run({ logger, reached: false }, run);
}

/**
 * The request handler as the SDK sees it: every call but `getAgentCard` marks the request as reached.
 * Methods run with the handler itself as `this`, so its own calls and reads are not counted.
 */
export function observedHandler(handler: A2ARequestHandler): A2ARequestHandler {
  return new Proxy(handler, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...a: unknown[]) => unknown;
      if (property === 'getAgentCard') return method.bind(target);
      return (...args: unknown[]): unknown => {
        const scope = scopes.getStore();
        if (scope) scope.reached = true;
        return method.apply(target, args);
      };
    },
  });
}

const INVALID = {
  message: 'Invalid params: the request could not be read',
  detail: {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: 'INVALID_PARAMS',
    domain: HOST_ERROR_DOMAIN,
  },
};

/**
 * The last line of the edge: an internal error the SDK is about to send (JSON-RPC -32603, a v0.3 REST
 * `{"code": -32603}`, or an HTTP 5xx google.rpc.Status) carries the text of whatever the SDK caught.
 * Before the host's handler ran, only the SDK's own reading of the request can have failed: that is the
 * client's input, answered -32602 / 400. After it, the error stays internal but its text is replaced.
 * The host's handler itself only ever lets a generic `Internal error` through.
 */
function guardSdkReply(
  body: unknown,
  res: Response,
  { scope, shape }: { scope: SdkScope; shape: 'jsonrpc' | 'rest' },
): unknown {
  if (!isJsonObject(body)) return body;
  const rpcError = shape === 'jsonrpc' && isJsonObject(body.error) ? body.error : undefined;
  const legacyRest = shape === 'rest' && typeof body.code === 'number' ? body : undefined;
  const internal =
    rpcError?.code === -32603 ||
    legacyRest?.code === -32603 ||
    (shape === 'rest' && res.statusCode >= 500 && isJsonObject(body.error));
  if (!internal) return body;
  scope.logger[scope.reached ? 'error' : 'info']('a2a.sdk_internal_error', {
    reached: scope.reached,
    status: res.statusCode,
  });
  const { jsonRpc, status, name } = HOST_ERRORS.INVALID_PARAMS;
  if (rpcError) {
    if (res.statusCode >= 500 && !scope.reached) res.status(status);
    const error = scope.reached
      ? { code: -32603, message: 'Internal error' }
      : { code: jsonRpc, message: INVALID.message, data: [INVALID.detail] };
    return { ...body, error };
  }
  if (legacyRest) {
    if (!scope.reached) res.status(status);
    return scope.reached
      ? { code: -32603, message: 'Internal error' }
      : { code: jsonRpc, message: INVALID.message };
  }
  if (scope.reached) return internalRestError(res.statusCode);
  res.status(status);
  return { error: { code: status, status: name, message: INVALID.message, details: [INVALID.detail] } };
}

/**
 * An HTTP+JSON 5xx answer once the host's handler ran, as the SDK path sends it (see {@link guardSdkReply}):
 * google.rpc.Status with the generic message and no details (A2A §11.6).
 */
export function internalRestError(status: number): object {
  return { error: { code: status, status: 'INTERNAL', message: 'Internal error', details: [] } };
}

/** The console methods the SDK writes its diagnostics with. */
export type DiagnosticConsole = Pick<Console, 'error' | 'warn'>;

/** The routing functions installed (by identity: a spy copied from one must not count as one). */
const routedFunctions = new WeakSet<object>();

/**
 * The SDK writes diagnostics with the console's `error` and `warn` (it takes no logger), several of them on
 * ordinary client mistakes, with stack traces and request text. Inside an A2A request's scope those calls
 * go to the host's JSON logger instead, as `a2a.sdk_diagnostic` with a fixed kind and the error's class
 * and code — never the SDK's text, which may carry request content. Outside a scope they pass through.
 * Installed once on the console the entry point owns; idempotent.
 */
export function routeSdkConsole(target: DiagnosticConsole): void {
  for (const level of ['error', 'warn'] as const) {
    const current = target[level];
    if (routedFunctions.has(current)) continue;
    const routed = (...args: unknown[]): void => {
      const scope = scopes.getStore();
      if (!scope) return current.apply(target, args);
      const error = args.find((a) => a instanceof Error);
      // A coded A2A error (an unknown task, a refused extension) is the client's mistake, not the host's.
      const logLevel = error instanceof A2AError ? 'info' : level;
      scope.logger[logLevel]('a2a.sdk_diagnostic', {
        kind: diagnosticKind(args[0]),
        ...(error ? errorFields(error) : {}),
      });
    };
    routedFunctions.add(routed);
    target[level] = routed;
  }
}

/** The SDK's diagnostic lines we know, by their fixed opening words (what follows may be request text). */
const KINDS: readonly [string, string][] = [
  ['Pre-stream error', 'pre_stream_error'],
  ['Error during SSE streaming', 'stream_error'],
  ['SSE streaming error', 'stream_error'],
  ['Legacy SSE streaming error', 'stream_error'],
  ['Unhandled error in JSON-RPC POST handler', 'jsonrpc_handler_error'],
  ['Agent execution failed', 'agent_execution_failed'],
  ['Event processing loop failed', 'event_loop_failed'],
  ['Tenant mismatch', 'tenant_mismatch'],
  ['Reference task', 'reference_task_not_found'],
  ['ResultManager', 'result_manager'],
  ['Failed to send push notification', 'push_failed'],
  ['Error sending push notification', 'push_failed'],
  ['Failed to load full task', 'task_load_failed'],
  ['Skipping', 'row_unreadable'],
  ['toCoreAuthenticationInfo', 'lossy_conversion'],
  ['Error fetching', 'agent_card_failed'],
];

function diagnosticKind(first: unknown): string {
  if (typeof first !== 'string') return 'unrecognised';
  return KINDS.find(([opening]) => first.startsWith(opening))?.[1] ?? 'unrecognised';
}

import { A2AError } from '@a2a-js/sdk/errors';
import { GRPC_STATUS_CODE } from '@a2a-js/sdk/errors/grpc';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';

/**
 * A generic internal error with the gRPC status A2A §10 maps InternalError to (INTERNAL). The SDK's gRPC
 * service gives any error that is not an A2A error the status UNKNOWN; the host's handler has already
 * replaced such errors by a generic `Internal error` (request-handler.ts), and this carries it as INTERNAL,
 * the counterpart of JSON-RPC -32603 and HTTP 500.
 */
class GrpcInternalError extends A2AError {
  readonly transport = 'grpc';
  readonly status = GRPC_STATUS_CODE.INTERNAL;
}

function toGrpcError(error: unknown): unknown {
  return error instanceof A2AError ? error : new GrpcInternalError('Internal error');
}

/** Implemented by the gRPC front's per-call user: aborts when the client cancels the call or goes away. */
function cancellationOf(context: ServerCallContext): AbortSignal | undefined {
  const signal = (context.user as { signal?: unknown } | undefined)?.signal;
  return signal instanceof AbortSignal ? signal : undefined;
}

/**
 * Ends a stream the moment its gRPC call is cancelled. The SDK's gRPC service keeps iterating a stream
 * whose client has gone; an ACMP stream can heartbeat for an hour, so without this a cancelled call
 * would hold its follower until the task ends. The source is asked to return (its `finally` blocks run
 * at its next step) and nothing more is written.
 *
 * Each step waits on the source or the cancellation, whichever comes first, through a promise of its own:
 * a race against one long-lived "cancelled" promise would leave a reaction on it per event, holding every
 * event of the stream until the call ends (an hour-long stream of chunks kept whole in memory).
 */
async function* untilCancelled<T>(
  source: AsyncGenerator<T, void, undefined>,
  signal: AbortSignal | undefined,
): AsyncGenerator<T, void, undefined> {
  let cancel: (() => void) | undefined;
  const onAbort = (): void => cancel?.();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      if (signal?.aborted) return;
      const next = source.next();
      const step = await new Promise<IteratorResult<T, void> | 'cancelled'>((resolve, reject) => {
        cancel = () => resolve('cancelled');
        next.then(resolve, reject);
      });
      cancel = undefined;
      if (step === 'cancelled') {
        // The pending step settles once the source moves on; its outcome no longer matters.
        next.catch(() => undefined);
        return;
      }
      if (step.done) return;
      yield step.value;
    }
  } catch (error) {
    throw toGrpcError(error);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    source.return(undefined).catch(() => undefined);
  }
}

/**
 * The request handler as the gRPC services see it: the same handler — which judges every request's values
 * and ids as on HTTP (src/a2a/host/wire-limits.ts) — with errors given their gRPC status and streams ended when
 * their call is cancelled. Nothing else differs between transports.
 */
export function forGrpc(inner: A2ARequestHandler): A2ARequestHandler {
  const unary =
    <P, R>(call: (params: P, context: ServerCallContext) => Promise<R>) =>
    async (params: P, context: ServerCallContext): Promise<R> => {
      try {
        return await call(params, context);
      } catch (error) {
        throw toGrpcError(error);
      }
    };
  const stream =
    <P, R>(open: (params: P, context: ServerCallContext) => AsyncGenerator<R, void, undefined>) =>
    (params: P, context: ServerCallContext): AsyncGenerator<R, void, undefined> => {
      let source: AsyncGenerator<R, void, undefined>;
      try {
        source = open(params, context);
      } catch (error) {
        throw toGrpcError(error);
      }
      return untilCancelled(source, cancellationOf(context));
    };
  return {
    getAgentCard: () => inner.getAgentCard(),
    getAuthenticatedExtendedAgentCard: unary((p, c) => inner.getAuthenticatedExtendedAgentCard(p, c)),
    sendMessage: unary((p, c) => inner.sendMessage(p, c)),
    sendMessageStream: stream((p, c) => inner.sendMessageStream(p, c)),
    getTask: unary((p, c) => inner.getTask(p, c)),
    cancelTask: unary((p, c) => inner.cancelTask(p, c)),
    createTaskPushNotificationConfig: unary((p, c) => inner.createTaskPushNotificationConfig(p, c)),
    getTaskPushNotificationConfig: unary((p, c) => inner.getTaskPushNotificationConfig(p, c)),
    listTaskPushNotificationConfigs: unary((p, c) => inner.listTaskPushNotificationConfigs(p, c)),
    deleteTaskPushNotificationConfig: unary((p, c) => inner.deleteTaskPushNotificationConfig(p, c)),
    resubscribe: stream((p, c) => inner.resubscribe(p, c)),
    listTasks: unary((p, c) => inner.listTasks(p, c)),
  };
}

import type * as grpc from '@grpc/grpc-js';

/** A call of an A2A service method, unary or server-streaming (the A2A services have no other kind). */
export type GrpcCall = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>;

/**
 * A check in front of a call: it runs `serve` when the call may go on, or resolves to the refusal the
 * call ends with. It may call `serve` inside a scope of its own (the SDK's logging scope).
 */
export type GrpcGuard = (call: GrpcCall, serve: () => void) => Promise<grpc.ServiceError | undefined>;

/**
 * Puts `guard` in front of every method of an SDK service implementation: a refusal ends the call with
 * that error (the method never runs); a guard that fails unexpectedly ends it with `failure()`.
 */
export function guardedService(
  definition: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
  guarded: { guard: GrpcGuard; failure: () => grpc.ServiceError },
): grpc.UntypedServiceImplementation {
  const { guard, failure } = guarded;
  const out: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(definition)) {
    const inner = implementation[name];
    if (!inner) continue;
    if (method.responseStream) {
      const serve = inner as grpc.handleServerStreamingCall<unknown, unknown>;
      out[name] = ((call: grpc.ServerWritableStream<unknown, unknown>) => {
        void guard(call, () => serve(call)).then(
          (refusal) => refusal && call.emit('error', refusal),
          () => call.emit('error', failure()),
        );
      }) as grpc.handleServerStreamingCall<unknown, unknown>;
    } else {
      const serve = inner as grpc.handleUnaryCall<unknown, unknown>;
      out[name] = ((call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        void guard(call, () => serve(call, callback)).then(
          (refusal) => refusal && callback(refusal),
          () => callback(failure()),
        );
      }) as grpc.handleUnaryCall<unknown, unknown>;
    }
  }
  return out;
}

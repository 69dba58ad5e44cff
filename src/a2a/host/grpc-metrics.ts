import * as grpc from '@grpc/grpc-js';
import type { Metrics } from '../../shared/metrics.js';

/** A gRPC status as a request outcome, the same bounded set HTTP requests count in. */
function outcomeOf(code: number | undefined): string {
  switch (code) {
    case undefined:
    case grpc.status.OK:
      return 'ok';
    case grpc.status.UNAUTHENTICATED:
    case grpc.status.PERMISSION_DENIED:
      return 'unauthenticated';
    case grpc.status.RESOURCE_EXHAUSTED:
      return 'rate_limited';
    case grpc.status.INTERNAL:
    case grpc.status.UNKNOWN:
    case grpc.status.UNAVAILABLE:
    case grpc.status.DATA_LOSS:
      return 'server_error';
    default:
      return 'client_error';
  }
}

/**
 * Counts every call of a service implementation once it ends, as binding `grpc`, the method's name (the
 * service definition's fixed set) and its outcome (docs/operations.md "Metrics"). Outermost, so calls
 * refused by the request rate or the bearer check count too.
 */
export function countedService(
  definition: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
  metrics: Metrics,
): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(definition)) {
    const inner = implementation[name];
    if (!inner) continue;
    const count = (code: number | undefined): void => metrics.request('grpc', name, outcomeOf(code));
    if (method.responseStream) {
      const serve = inner as grpc.handleServerStreamingCall<unknown, unknown>;
      out[name] = ((call: grpc.ServerWritableStream<unknown, unknown>) => {
        let counted = false;
        const once = (code: number | undefined): void => {
          if (!counted) count(code);
          counted = true;
        };
        call.once('finish', () => once(grpc.status.OK));
        call.once('error', (error: { code?: number }) => once(error.code ?? grpc.status.UNKNOWN));
        serve(call);
      }) as grpc.handleServerStreamingCall<unknown, unknown>;
    } else {
      const serve = inner as grpc.handleUnaryCall<unknown, unknown>;
      out[name] = ((call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        serve(call, (error, ...rest) => {
          count(error ? (error.code ?? grpc.status.UNKNOWN) : grpc.status.OK);
          callback(error, ...rest);
        });
      }) as grpc.handleUnaryCall<unknown, unknown>;
    }
  }
  return out;
}

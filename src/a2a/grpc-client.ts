import { rootCertificates } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { AgentCard, AgentInterface } from '@a2a-js/sdk';
import type { RequestOptions, Transport, TransportFactory } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { A2AError } from '@a2a-js/sdk/errors';
import { GRPC_STATUS_CODE } from '@a2a-js/sdk/errors/grpc';
import { traceHeaders } from '../shared/tracing.js';

/**
 * Whether a client dials the card's gRPC interface with TLS. A gRPC address (`host:port`) carries no
 * scheme, so: `explicit` when given; otherwise TLS unless the card's HTTP interfaces are plain `http://`
 * — our host serves gRPC with the certificate of its HTTP interfaces or not at all (docs/host.md "gRPC"),
 * and a card with no HTTP interface gets TLS (secure by default).
 */
export function grpcUsesTls(card: AgentCard, explicit?: boolean): boolean {
  if (explicit !== undefined) return explicit;
  const http = card.supportedInterfaces.filter((i) => /^https?:\/\//.test(i.url));
  return http.length === 0 || http.some((i) => i.url.startsWith('https://'));
}

/** Whether a client reaches this interface of the card over TLS (see {@link grpcUsesTls} for gRPC). */
export function interfaceUsesTls(card: AgentCard, i: AgentInterface, explicitGrpcTls?: boolean): boolean {
  return i.protocolBinding === 'GRPC' ? grpcUsesTls(card, explicitGrpcTls) : i.url.startsWith('https://');
}

/**
 * The SDK's gRPC transport factory (v1.0, and its v0.3 transport for 0.3 interfaces), with TLS trusting
 * `caCert` in addition to the system roots, and transport failures told apart from refusals: the SDK
 * reports every gRPC status as an A2A error, also UNAVAILABLE (connection refused or dropped, server
 * shutting down). That one is rethrown as a plain Error, as a failed fetch is on the HTTP transports,
 * so callers that retry transport failures (the ACMP buyer) retry it on gRPC too.
 */
export function grpcTransportFactory(options: {
  tls: boolean;
  caCert?: string | undefined;
}): TransportFactory {
  const credentials = options.tls
    ? grpc.credentials.createSsl(
        Buffer.from([...rootCertificates, ...(options.caCert ? [options.caCert] : [])].join('\n')),
      )
    : grpc.credentials.createInsecure();
  const inner = new GrpcTransportFactory({
    grpcChannelCredentials: credentials,
    legacyCompat: { enabled: true },
  });
  return {
    get protocolName() {
      return inner.protocolName;
    },
    create: async (url, card) => new FailureAwareTransport(await inner.create(url, card)),
  };
}

function transportFailure(error: unknown): unknown {
  if (error instanceof A2AError && 'status' in error && error.status === GRPC_STATUS_CODE.UNAVAILABLE) {
    return new Error(`gRPC transport failure: ${error.message}`, { cause: error });
  }
  return error;
}

async function* failureAware<T>(
  source: AsyncGenerator<T, void, undefined>,
): AsyncGenerator<T, void, undefined> {
  try {
    yield* source;
  } catch (error) {
    throw transportFailure(error);
  }
}

type Params<K extends keyof Transport> = Transport[K] extends (
  params: infer P,
  options?: RequestOptions,
) => unknown
  ? P
  : never;

/**
 * The call's options with the active trace context added as metadata (`traceparent`, `tracestate`; the
 * SDK sends service parameters as gRPC metadata), the gRPC counterpart of `tracedFetch`.
 */
function traced(options: RequestOptions | undefined): RequestOptions | undefined {
  const trace = traceHeaders();
  if (trace === undefined) return options;
  return { ...options, serviceParameters: { ...options?.serviceParameters, ...trace } };
}

/**
 * A transport whose UNAVAILABLE errors are transport failures (see {@link grpcTransportFactory}) and
 * whose calls carry the trace context.
 */
class FailureAwareTransport implements Transport {
  constructor(private readonly base: Transport) {}
  get protocolName(): string {
    return this.base.protocolName;
  }
  get protocolVersion(): string {
    return this.base.protocolVersion;
  }
  private call<R>(promise: Promise<R>): Promise<R> {
    return promise.catch((error: unknown) => Promise.reject(transportFailure(error)));
  }
  getExtendedAgentCard(params: Params<'getExtendedAgentCard'>, options?: RequestOptions) {
    return this.call(this.base.getExtendedAgentCard(params, traced(options)));
  }
  sendMessage(params: Params<'sendMessage'>, options?: RequestOptions) {
    return this.call(this.base.sendMessage(params, traced(options)));
  }
  sendMessageStream(params: Params<'sendMessageStream'>, options?: RequestOptions) {
    return failureAware(this.base.sendMessageStream(params, traced(options)));
  }
  createTaskPushNotificationConfig(
    params: Params<'createTaskPushNotificationConfig'>,
    options?: RequestOptions,
  ) {
    return this.call(this.base.createTaskPushNotificationConfig(params, traced(options)));
  }
  getTaskPushNotificationConfig(params: Params<'getTaskPushNotificationConfig'>, options?: RequestOptions) {
    return this.call(this.base.getTaskPushNotificationConfig(params, traced(options)));
  }
  listTaskPushNotificationConfig(params: Params<'listTaskPushNotificationConfig'>, options?: RequestOptions) {
    return this.call(this.base.listTaskPushNotificationConfig(params, traced(options)));
  }
  deleteTaskPushNotificationConfig(
    params: Params<'deleteTaskPushNotificationConfig'>,
    options?: RequestOptions,
  ) {
    return this.call(this.base.deleteTaskPushNotificationConfig(params, traced(options)));
  }
  getTask(params: Params<'getTask'>, options?: RequestOptions) {
    return this.call(this.base.getTask(params, traced(options)));
  }
  cancelTask(params: Params<'cancelTask'>, options?: RequestOptions) {
    return this.call(this.base.cancelTask(params, traced(options)));
  }
  listTasks(params: Params<'listTasks'>, options?: RequestOptions) {
    return this.call(this.base.listTasks(params, traced(options)));
  }
  resubscribeTask(params: Params<'resubscribeTask'>, options?: RequestOptions) {
    return failureAware(this.base.resubscribeTask(params, traced(options)));
  }
}

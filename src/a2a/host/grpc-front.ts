import type { Metrics } from '../../shared/metrics.js';
import { countedService } from './grpc-metrics.js';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import * as grpc from '@grpc/grpc-js';
import { LegacyA2AService, legacyGrpcService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import type { A2ARequestHandler, User } from '@a2a-js/sdk/server';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import type { BearerToken } from '../../shared/identity.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import type { RequestLimiter } from '../../shared/request-rate.js';
import { ANONYMOUS_USER, BEARER_REFUSAL } from './bearer.js';
import { callerVerifier, type CallerVerifier, type DidCallerPolicy } from './caller-auth.js';
import { guardedService, type GrpcCall, type GrpcGuard } from './grpc-guard.js';
import { forGrpc } from './grpc-handler.js';
import { acceptLegacyExtensions } from './interop-headers.js';
import { rateLimited } from './grpc-rate.js';
import { inSdkScope } from './sdk-scope.js';
import { HealthService, HealthStatus, type ReadinessSource } from './grpc-health.js';
import {
  grpcCredentials,
  grpcServerOptions,
  listenGrpc,
  type GrpcConnectionLimits,
  type GrpcListener,
} from './grpc-listener.js';
import { HOST_ERROR_DOMAIN } from './wire-errors.js';

/** The fully-qualified names of the A2A services the front serves (health reports each). */
export const GRPC_SERVICE_NAMES = {
  v1: 'lf.a2a.v1.A2AService',
  v03: 'a2a.v1.A2AService',
} as const;

export interface GrpcFrontOptions {
  /** The host's one request handler (the same object behind JSON-RPC and HTTP+JSON). */
  handler: A2ARequestHandler;
  tokens: readonly BearerToken[];
  /** Callers identified by DID tokens (the host's one policy, shared with HTTP); absent: tokens only. */
  didCallers?: DidCallerPolicy | undefined;
  /** Largest request message accepted: the host's HTTP body limit. Larger: RESOURCE_EXHAUSTED. */
  maxMessageBytes: number;
  /** Keepalive, idle, first-bytes and connection limits of the port (src/a2a/host/grpc-listener.ts). */
  limits: GrpcConnectionLimits;
  /** PEM material: the same certificate the HTTPS interfaces use. Absent: plaintext (h2c). */
  tls?: { cert: string; key: string } | undefined;
  logger?: Logger;
  /** The host's request rate per caller, shared with HTTP (src/a2a/host/grpc-rate.ts); absent: none. */
  rate?: RequestLimiter | undefined;
  /** Counts every call by method and outcome (docs/operations.md "Metrics"); absent: none. */
  metrics?: Metrics | undefined;
  /** The host's readiness: health answers NOT_SERVING while it is not ready; absent: SERVING until close. */
  readiness?: ReadinessSource | undefined;
}

/** A listening gRPC front. */
export interface GrpcFront {
  readonly port: number;
  readonly health: HealthStatus;
  /**
   * Graceful stop: health turns NOT_SERVING, new calls are refused (GOAWAY), calls in flight may finish
   * for `graceMs`; whatever still runs then is cancelled.
   */
  close(graceMs: number): Promise<void>;
}

/**
 * Serves the host's request handler over gRPC (A2A §10): the SDK's v1.0 service (`lf.a2a.v1.A2AService`),
 * its v0.3 compat service (`a2a.v1.A2AService`) and the standard health service, on one port. In front of
 * both A2A services sits the same bearer check as on HTTP (token in the `authorization` metadata, the
 * same caller identity); a missing or wrong token is UNAUTHENTICATED with an ErrorInfo
 * (`reason: UNAUTHENTICATED`, domain `a2a-commerce`) in `grpc-status-details-bin`, and the handler never
 * runs. Health answers without a token (probes carry none).
 * @throws Error when the port cannot be bound.
 */
export async function startGrpcFront(
  address: { host: string; port: number },
  options: GrpcFrontOptions,
): Promise<GrpcFront> {
  const front = new GrpcFrontServer(options, options.logger ?? silentLogger);
  await front.listen(address);
  return front;
}

/** The gRPC server behind {@link startGrpcFront}: the A2A services behind the bearer check, and health. */
class GrpcFrontServer implements GrpcFront {
  readonly health: HealthStatus;
  private readonly server: grpc.Server;
  private readonly verify: CallerVerifier;
  /** The caller of each authenticated call, for the SDK's user builder. */
  private readonly users = new WeakMap<object, User>();
  private listener: GrpcListener | undefined;

  constructor(
    private readonly options: GrpcFrontOptions,
    private readonly logger: Logger,
  ) {
    this.health = new HealthStatus([GRPC_SERVICE_NAMES.v1, GRPC_SERVICE_NAMES.v03], options.readiness);
    this.server = new grpc.Server({
      'grpc.max_receive_message_length': options.maxMessageBytes,
      ...grpcServerOptions(options.limits),
    });
    this.verify = callerVerifier(options.tokens, options.didCallers);
    const userBuilder = (call: object): Promise<User> =>
      Promise.resolve(this.users.get(call) ?? ANONYMOUS_USER);
    const requestHandler = forGrpc(options.handler);
    // Each call runs in the SDK scope (its diagnostics go to the JSON logger, as on HTTP), bearer check first.
    const authenticate: GrpcGuard = (call, serve) =>
      inSdkScope(this.logger, async () => {
        const refusal = (await this.authenticate(call)) ?? unreadable(call.request);
        if (!refusal) serve();
        return refusal;
      });
    // The request rate runs before that, as on HTTP (docs/host.md "Limits per caller").
    const { rate, tokens } = options;
    const limit = (definition: grpc.ServiceDefinition, impl: grpc.UntypedServiceImplementation) =>
      counted(definition, rate ? rateLimited(definition, impl, { limiter: rate, tokens, logger }) : impl);
    const counted = (definition: grpc.ServiceDefinition, impl: grpc.UntypedServiceImplementation) =>
      options.metrics ? countedService(definition, impl, options.metrics) : impl;
    const v1 = readable(A2AService);
    const v03 = readable(LegacyA2AService);
    this.server.addService(
      v1,
      limit(v1, authenticated(v1, grpcService({ requestHandler, userBuilder }), authenticate)),
    );
    this.server.addService(
      v03,
      limit(v03, authenticated(v03, legacyGrpcService({ requestHandler, userBuilder }), authenticate)),
    );
    this.server.addService(HealthService, this.health.implementation());
  }

  get port(): number {
    return this.listener?.port ?? 0;
  }

  /** Binds the port (0: any free one). @throws Error when the port cannot be bound. */
  async listen(address: { host: string; port: number }): Promise<void> {
    const { limits, tls } = this.options;
    this.listener = await listenGrpc(address, {
      server: this.server,
      credentials: grpcCredentials(tls, limits),
      limits,
      logger: this.logger,
    });
    this.logger.info('grpc.listening', { port: this.port, tls: tls !== undefined });
  }

  close(graceMs: number): Promise<void> {
    this.health.shutdown();
    this.listener?.close({ destroy: false });
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.logger.warn('grpc.forced_shutdown', { graceMs });
        this.server.forceShutdown();
        this.listener?.close({ destroy: true });
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        this.listener?.close({ destroy: true });
        resolve();
      });
    });
  }

  /** The bearer check of one call: its refusal, or `undefined` with the caller recorded for the handler. */
  private async authenticate(call: GrpcCall): Promise<grpc.ServiceError | undefined> {
    acceptLegacyExtensions(call.metadata);
    const header = call.metadata.get('authorization')[0];
    const check = await this.verify(typeof header === 'string' ? header : header?.toString('utf8'));
    if ('refused' in check) return unauthenticated(BEARER_REFUSAL[check.refused]);
    this.users.set(call, callerOf(check.user, call));
    return undefined;
  }
}

/**
 * The caller of one call: its authenticated user plus a signal that aborts when the client cancels the
 * call or goes away, so a stream the client left stops being fed (src/a2a/host/grpc-handler.ts).
 */
class GrpcCaller implements User {
  constructor(
    private readonly user: User,
    readonly signal: AbortSignal,
  ) {}
  get isAuthenticated(): boolean {
    return this.user.isAuthenticated;
  }
  get userName(): string {
    return this.user.userName;
  }
}

function callerOf(user: User, call: GrpcCall): GrpcCaller {
  const controller = new AbortController();
  call.once('cancelled', () => controller.abort());
  return new GrpcCaller(user, controller.signal);
}

/** Puts the bearer check (`authenticate`) in front of every method of an SDK service implementation. */
function authenticated(
  definition: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
  authenticate: GrpcGuard,
): grpc.UntypedServiceImplementation {
  return guardedService(definition, implementation, {
    guard: authenticate,
    failure: () => unauthenticated(BEARER_REFUSAL.invalid),
  });
}

/** UNAUTHENTICATED with a google.rpc.Status detail carrying our ErrorInfo, as the HTTP transports send it. */
function unauthenticated(message: string): grpc.ServiceError {
  return refusal(grpc.status.UNAUTHENTICATED, message, 'UNAUTHENTICATED');
}

function refusal(code: grpc.status, message: string, reason: string): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  metadata.set('grpc-status-details-bin', statusDetails(code, message, reason));
  return Object.assign(new Error(message), { code, details: message, metadata });
}

/** What a request that does not decode (bytes that are no such message, nesting beyond the stack) reads as. */
const UNDECODABLE = Symbol('undecodable request');

/**
 * The service definition with decoding that cannot throw: grpc-js answers a request that fails to decode
 * with INTERNAL, but such bytes are the client's mistake, so they read as {@link UNDECODABLE} and the
 * call is refused INVALID_ARGUMENT, as the HTTP transports answer an unreadable body 400.
 */
function readable<D extends grpc.ServiceDefinition>(definition: D): D {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(definition)) {
    out[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer): unknown => {
        try {
          return method.requestDeserialize(bytes) as unknown;
        } catch {
          return UNDECODABLE;
        }
      },
    };
  }
  return out as unknown as D;
}

function unreadable(request: unknown): grpc.ServiceError | undefined {
  if (request !== UNDECODABLE) return undefined;
  return refusal(
    grpc.status.INVALID_ARGUMENT,
    'Invalid params: the request could not be read',
    'INVALID_PARAMS',
  );
}

/** google.rpc.Status { code, message, details: [Any(google.rpc.ErrorInfo { reason, domain })] }. */
function statusDetails(code: number, message: string, reason: string): Buffer {
  const info = new BinaryWriter().uint32(10).string(reason).uint32(18).string(HOST_ERROR_DOMAIN).finish();
  const any = new BinaryWriter()
    .uint32(10)
    .string('type.googleapis.com/google.rpc.ErrorInfo')
    .uint32(18)
    .bytes(info)
    .finish();
  return Buffer.from(
    new BinaryWriter().uint32(8).int32(code).uint32(18).string(message).uint32(26).bytes(any).finish(),
  );
}

import { BinaryWriter } from '@bufbuild/protobuf/wire';
import * as grpc from '@grpc/grpc-js';
import { LegacyA2AService, legacyGrpcService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import type { A2ARequestHandler, User } from '@a2a-js/sdk/server';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import type { BearerToken } from '../shared/identity.js';
import { silentLogger, type Logger } from '../shared/logger.js';
import type { RequestLimiter } from '../shared/request-rate.js';
import { ANONYMOUS_USER, BEARER_REFUSAL, bearerVerifier } from './bearer.js';
import { forGrpc } from './grpc-handler.js';
import { rateLimited } from './grpc-rate.js';
import { HealthService, HealthStatus } from './grpc-health.js';
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
  /** Largest request message accepted: the host's HTTP body limit. Larger: RESOURCE_EXHAUSTED. */
  maxMessageBytes: number;
  /** Keepalive, idle, first-bytes and connection limits of the port (src/a2a/grpc-listener.ts). */
  limits: GrpcConnectionLimits;
  /** PEM material: the same certificate the HTTPS interfaces use. Absent: plaintext (h2c). */
  tls?: { cert: string; key: string } | undefined;
  logger?: Logger;
  /** The host's request rate per caller, shared with HTTP (src/a2a/grpc-rate.ts); absent: none. */
  rate?: RequestLimiter | undefined;
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
  readonly health = new HealthStatus([GRPC_SERVICE_NAMES.v1, GRPC_SERVICE_NAMES.v03]);
  private readonly server: grpc.Server;
  private readonly verify: ReturnType<typeof bearerVerifier>;
  /** The caller of each authenticated call, for the SDK's user builder. */
  private readonly users = new WeakMap<object, User>();
  private listener: GrpcListener | undefined;

  constructor(
    private readonly options: GrpcFrontOptions,
    private readonly logger: Logger,
  ) {
    this.server = new grpc.Server({
      'grpc.max_receive_message_length': options.maxMessageBytes,
      ...grpcServerOptions(options.limits),
    });
    this.verify = bearerVerifier(options.tokens);
    const userBuilder = (call: object): Promise<User> =>
      Promise.resolve(this.users.get(call) ?? ANONYMOUS_USER);
    const requestHandler = forGrpc(options.handler);
    const authenticate: Authenticate = (call) => this.authenticate(call);
    // The request rate runs first, as on HTTP (docs/host.md "Limits per caller").
    const { rate, tokens } = options;
    const limit = (definition: grpc.ServiceDefinition, impl: grpc.UntypedServiceImplementation) =>
      rate ? rateLimited(definition, impl, { limiter: rate, tokens, logger }) : impl;
    this.server.addService(
      A2AService,
      limit(
        A2AService,
        authenticated(A2AService, grpcService({ requestHandler, userBuilder }), authenticate),
      ),
    );
    this.server.addService(
      LegacyA2AService,
      limit(
        LegacyA2AService,
        authenticated(LegacyA2AService, legacyGrpcService({ requestHandler, userBuilder }), authenticate),
      ),
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
  private authenticate(
    call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
  ): grpc.ServiceError | undefined {
    const header = call.metadata.get('authorization')[0];
    const check = this.verify(typeof header === 'string' ? header : header?.toString('utf8'));
    if ('refused' in check) return unauthenticated(BEARER_REFUSAL[check.refused]);
    this.users.set(call, callerOf(check.user, call));
    return undefined;
  }
}

/**
 * The caller of one call: its authenticated user plus a signal that aborts when the client cancels the
 * call or goes away, so a stream the client left stops being fed (src/a2a/grpc-handler.ts).
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

function callerOf(
  user: User,
  call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
): GrpcCaller {
  const controller = new AbortController();
  call.once('cancelled', () => controller.abort());
  return new GrpcCaller(user, controller.signal);
}

type Authenticate = (
  call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
) => grpc.ServiceError | undefined;

/** Puts the bearer check in front of every method of an SDK service implementation. */
function authenticated(
  definition: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
  authenticate: Authenticate,
): grpc.UntypedServiceImplementation {
  const guarded: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(definition)) {
    const inner = implementation[name];
    if (!inner) continue;
    if (method.responseStream) {
      const serve = inner as grpc.handleServerStreamingCall<unknown, unknown>;
      guarded[name] = ((call: grpc.ServerWritableStream<unknown, unknown>) => {
        const refusal = authenticate(call);
        if (!refusal) return serve(call);
        call.emit('error', refusal);
      }) as grpc.handleServerStreamingCall<unknown, unknown>;
    } else {
      const serve = inner as grpc.handleUnaryCall<unknown, unknown>;
      guarded[name] = ((
        call: grpc.ServerUnaryCall<unknown, unknown>,
        callback: grpc.sendUnaryData<unknown>,
      ) => {
        const refusal = authenticate(call);
        if (!refusal) return serve(call, callback);
        callback(refusal);
      }) as grpc.handleUnaryCall<unknown, unknown>;
    }
  }
  return guarded;
}

/** UNAUTHENTICATED with a google.rpc.Status detail carrying our ErrorInfo, as the HTTP transports send it. */
function unauthenticated(message: string): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  metadata.set(
    'grpc-status-details-bin',
    statusDetails(grpc.status.UNAUTHENTICATED, message, 'UNAUTHENTICATED'),
  );
  return Object.assign(new Error(message), {
    code: grpc.status.UNAUTHENTICATED,
    details: message,
    metadata,
  });
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

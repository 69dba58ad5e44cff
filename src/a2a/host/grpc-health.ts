import { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';
import * as grpc from '@grpc/grpc-js';

/**
 * The standard gRPC health service (`grpc.health.v1.Health`, grpc/grpc `doc/health-checking.md`), which
 * service meshes and `grpc_health_probe` ask. Its two messages have one field each, so they are coded here
 * with the wire helpers we already ship instead of loading a .proto file at run time.
 */

/** `grpc.health.v1.HealthCheckResponse.ServingStatus`. */
export const SERVING_STATUS = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;
export type ServingStatus = (typeof SERVING_STATUS)[keyof typeof SERVING_STATUS];

interface HealthCheckRequest {
  service: string;
}
interface HealthCheckResponse {
  status: ServingStatus;
}

function encodeRequest(request: HealthCheckRequest): Buffer {
  const writer = new BinaryWriter();
  if (request.service !== '') writer.uint32(10).string(request.service);
  return Buffer.from(writer.finish());
}

function decodeRequest(bytes: Buffer): HealthCheckRequest {
  const reader = new BinaryReader(bytes);
  let service = '';
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === 10) service = reader.string();
    else reader.skip(tag & 7);
  }
  return { service };
}

function encodeResponse(response: HealthCheckResponse): Buffer {
  const writer = new BinaryWriter();
  if (response.status !== SERVING_STATUS.UNKNOWN) writer.uint32(8).int32(response.status);
  return Buffer.from(writer.finish());
}

function decodeResponse(bytes: Buffer): HealthCheckResponse {
  const reader = new BinaryReader(bytes);
  let status: number = SERVING_STATUS.UNKNOWN;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === 8) status = reader.int32();
    else reader.skip(tag & 7);
  }
  return { status: status as ServingStatus };
}

const codec = {
  requestSerialize: encodeRequest,
  requestDeserialize: decodeRequest,
  responseSerialize: encodeResponse,
  responseDeserialize: decodeResponse,
};

/** The service definition (clients build theirs from it with `grpc.makeGenericClientConstructor`). */
export const HealthService = {
  check: { path: '/grpc.health.v1.Health/Check', requestStream: false, responseStream: false, ...codec },
  watch: { path: '/grpc.health.v1.Health/Watch', requestStream: false, responseStream: true, ...codec },
} satisfies grpc.ServiceDefinition;

/**
 * The host's readiness as gRPC health reads it (src/server/health.ts `Readiness`): whether it is ready
 * now, and a call on every change.
 */
export interface ReadinessSource {
  ready(): Promise<boolean>;
  onChange(follower: (ready: boolean) => void): () => void;
}

/** How often open watches re-check the readiness (its database check is cached for as long). */
const WATCH_POLL_MS = 1000;

/**
 * Serving status per service name (`''` is the server as a whole). `Check` of an unknown name is
 * NOT_FOUND; `Watch` sends the current status, then every change, and SERVICE_UNKNOWN for an unknown name
 * (as the protocol asks). With a readiness source every service is NOT_SERVING while the host is not
 * ready (database, LISTEN, draining: docs/operations.md "Health, readiness and shutdown"); `Check` asks
 * it afresh, open watches are told each change and re-check it every second. {@link shutdown} turns
 * everything NOT_SERVING for good and ends the watches, so a mesh stops routing before the server stops
 * accepting.
 */
export class HealthStatus {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Set<{
    service: string;
    call: grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>;
  }>();
  private ready = true;
  private stopped = false;
  private poll: NodeJS.Timeout | undefined;
  private readonly unfollow: (() => void) | undefined;

  constructor(
    services: readonly string[],
    private readonly readiness?: ReadinessSource,
  ) {
    for (const s of ['', ...services]) this.statuses.set(s, SERVING_STATUS.SERVING);
    this.unfollow = readiness?.onChange((ready) => this.follow(ready));
  }

  set(service: string, status: ServingStatus): void {
    this.statuses.set(service, status);
    this.notify(service);
  }

  /** Every service NOT_SERVING for good; open watches get that status and end. */
  shutdown(): void {
    this.stopped = true;
    this.unfollow?.();
    this.stopPolling();
    for (const service of this.statuses.keys()) this.set(service, SERVING_STATUS.NOT_SERVING);
    for (const w of this.watchers) w.call.end();
    this.watchers.clear();
  }

  implementation(): grpc.UntypedServiceImplementation {
    const check: grpc.handleUnaryCall<HealthCheckRequest, HealthCheckResponse> = (call, callback) => {
      if (!this.statuses.has(call.request.service)) {
        callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
        return;
      }
      const asked = this.readiness ? this.readiness.ready() : Promise.resolve(true);
      void asked.then(
        (ready) => {
          this.follow(ready);
          callback(null, { status: this.statusOf(call.request.service) ?? SERVING_STATUS.UNKNOWN });
        },
        () => callback(null, { status: SERVING_STATUS.NOT_SERVING }),
      );
    };
    const watch: grpc.handleServerStreamingCall<HealthCheckRequest, HealthCheckResponse> = (call) => {
      const watcher = { service: call.request.service, call };
      call.write({ status: this.statusOf(watcher.service) ?? SERVING_STATUS.SERVICE_UNKNOWN });
      this.watchers.add(watcher);
      this.startPolling();
      call.once('cancelled', () => {
        this.watchers.delete(watcher);
        if (this.watchers.size === 0) this.stopPolling();
      });
    };
    return { check, watch };
  }

  /** The status a service answers: its own, NOT_SERVING while the host is not ready. */
  private statusOf(service: string): ServingStatus | undefined {
    const own = this.statuses.get(service);
    if (own === undefined || this.stopped) return own;
    return this.ready ? own : SERVING_STATUS.NOT_SERVING;
  }

  private follow(ready: boolean): void {
    if (ready === this.ready) return;
    this.ready = ready;
    for (const service of this.statuses.keys()) this.notify(service);
  }

  private notify(service: string): void {
    const status = this.statusOf(service);
    if (status === undefined) return;
    for (const w of this.watchers) if (w.service === service) w.call.write({ status });
  }

  /** While watches are open, asks the readiness every second, so a lost database reaches them too. */
  private startPolling(): void {
    if (!this.readiness || this.poll || this.stopped) return;
    const readiness = this.readiness;
    this.poll = setInterval(() => {
      readiness.ready().then(
        (ready) => this.follow(ready),
        () => this.follow(false),
      );
    }, WATCH_POLL_MS);
    this.poll.unref();
  }

  private stopPolling(): void {
    clearInterval(this.poll);
    this.poll = undefined;
  }
}

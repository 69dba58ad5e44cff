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
 * Serving status per service name (`''` is the server as a whole). `Check` of an unknown name is
 * NOT_FOUND; `Watch` sends the current status, then every change, and SERVICE_UNKNOWN for an unknown name
 * (as the protocol asks). {@link shutdown} turns everything NOT_SERVING and ends the watches, so a mesh
 * stops routing before the server stops accepting.
 */
export class HealthStatus {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Set<{
    service: string;
    call: grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>;
  }>();

  constructor(services: readonly string[]) {
    for (const s of ['', ...services]) this.statuses.set(s, SERVING_STATUS.SERVING);
  }

  set(service: string, status: ServingStatus): void {
    this.statuses.set(service, status);
    for (const w of this.watchers) if (w.service === service) w.call.write({ status });
  }

  /** Every service NOT_SERVING; open watches get that status and end. */
  shutdown(): void {
    for (const service of this.statuses.keys()) this.set(service, SERVING_STATUS.NOT_SERVING);
    for (const w of this.watchers) w.call.end();
    this.watchers.clear();
  }

  implementation(): grpc.UntypedServiceImplementation {
    const check: grpc.handleUnaryCall<HealthCheckRequest, HealthCheckResponse> = (call, callback) => {
      const status = this.statuses.get(call.request.service);
      if (status === undefined) callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
      else callback(null, { status });
    };
    const watch: grpc.handleServerStreamingCall<HealthCheckRequest, HealthCheckResponse> = (call) => {
      const watcher = { service: call.request.service, call };
      call.write({ status: this.statuses.get(watcher.service) ?? SERVING_STATUS.SERVICE_UNKNOWN });
      this.watchers.add(watcher);
      call.once('cancelled', () => this.watchers.delete(watcher));
    };
    return { check, watch };
  }
}

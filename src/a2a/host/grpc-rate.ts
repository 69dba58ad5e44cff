import { BinaryWriter } from '@bufbuild/protobuf/wire';
import * as grpc from '@grpc/grpc-js';
import type { BearerToken } from '../../shared/identity.js';
import type { Logger } from '../../shared/logger.js';
import { rateKeyOf, type RequestLimiter } from '../../shared/request-rate.js';
import { bearerVerifier } from './bearer.js';
import { guardedService, type GrpcCall } from './grpc-guard.js';
import { HOST_ERROR_DOMAIN } from './wire-errors.js';

/** What {@link rateLimited} counts with. */
export interface GrpcRateOptions {
  readonly limiter: RequestLimiter;
  readonly tokens: readonly BearerToken[];
  readonly logger: Logger;
}

/**
 * Puts the host's request rate in front of every method of a service (before the bearer check, as on
 * HTTP): a call counts for the identity its `authorization` metadata names, or for the peer's address.
 * Over the rate: `RESOURCE_EXHAUSTED` with a google.rpc.Status carrying an ErrorInfo (`RATE_LIMITED`,
 * domain `a2a-commerce`) and a google.rpc.RetryInfo, plus `retry-after` metadata in seconds; logged.
 */
export function rateLimited(
  definition: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
  options: GrpcRateOptions,
): grpc.UntypedServiceImplementation {
  const verify = bearerVerifier(options.tokens);
  const admit = async (call: GrpcCall): Promise<grpc.ServiceError | undefined> => {
    const header = call.metadata.get('authorization')[0];
    const check = verify(typeof header === 'string' ? header : header?.toString('utf8'));
    const identity = 'user' in check && check.user.isAuthenticated ? check.user.userName : undefined;
    const verdict = await options.limiter.take(rateKeyOf(identity, peerAddress(call.getPeer())));
    if (verdict.admitted) return undefined;
    options.logger.warn('limit.rate_refused', {
      binding: 'grpc',
      caller: identity ?? 'anonymous',
      requests: options.limiter.requests,
      windowMs: options.limiter.windowMs,
      retryAfterMs: verdict.retryAfterMs,
    });
    return resourceExhausted(Math.ceil(verdict.retryAfterMs / 1000));
  };
  return guardedService(definition, implementation, {
    guard: async (call, serve) => {
      const refusal = await admit(call);
      if (!refusal) serve();
      return refusal;
    },
    failure: internal,
  });
}

/** The address part of a grpc-js peer (`127.0.0.1:5000`, `[::1]:5000`, `ipv4:…`). */
function peerAddress(peer: string): string {
  const bare = peer.replace(/^ipv[46]:/, '');
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(bare)?.[1];
  if (bracketed !== undefined) return bracketed;
  return /^[^:]+:\d+$/.test(bare) ? bare.slice(0, bare.lastIndexOf(':')) : bare;
}

const MESSAGE = 'Too many requests';

function resourceExhausted(retryAfterS: number): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  metadata.set('retry-after', String(retryAfterS));
  metadata.set('grpc-status-details-bin', statusDetails(retryAfterS));
  return Object.assign(new Error(MESSAGE), {
    code: grpc.status.RESOURCE_EXHAUSTED,
    details: MESSAGE,
    metadata,
  });
}

function internal(): grpc.ServiceError {
  return Object.assign(new Error('Internal error'), {
    code: grpc.status.INTERNAL,
    details: 'Internal error',
    metadata: new grpc.Metadata(),
  });
}

/**
 * google.rpc.Status { code: RESOURCE_EXHAUSTED, message, details: [ErrorInfo { reason: RATE_LIMITED,
 * domain, metadata { retryAfterSeconds } }, RetryInfo { retry_delay { seconds } }] }.
 */
function statusDetails(retryAfterS: number): Buffer {
  const entry = new BinaryWriter()
    .uint32(10)
    .string('retryAfterSeconds')
    .uint32(18)
    .string(String(retryAfterS))
    .finish();
  const info = new BinaryWriter()
    .uint32(10)
    .string('RATE_LIMITED')
    .uint32(18)
    .string(HOST_ERROR_DOMAIN)
    .uint32(26)
    .bytes(entry)
    .finish();
  const delay = new BinaryWriter().uint32(8).int64(retryAfterS).finish();
  const retry = new BinaryWriter().uint32(10).bytes(delay).finish();
  const any = (type: string, value: Uint8Array): Uint8Array =>
    new BinaryWriter().uint32(10).string(`type.googleapis.com/${type}`).uint32(18).bytes(value).finish();
  return Buffer.from(
    new BinaryWriter()
      .uint32(8)
      .int32(grpc.status.RESOURCE_EXHAUSTED)
      .uint32(18)
      .string(MESSAGE)
      .uint32(26)
      .bytes(any('google.rpc.ErrorInfo', info))
      .uint32(26)
      .bytes(any('google.rpc.RetryInfo', retry))
      .finish(),
  );
}

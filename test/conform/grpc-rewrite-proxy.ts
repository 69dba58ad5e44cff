import { SendMessageRequest, SendMessageResponse, StreamResponse } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import * as grpc from '@grpc/grpc-js';
import { onCleanup } from '../helpers/cleanup.js';
import type { Rewrites } from './rewrite-proxy.js';

/**
 * The gRPC side of the conformance fixture's man in the middle (test/conform/rewrite-proxy.ts): a gRPC
 * server on 127.0.0.1 forwarding every A2A v1.0 method to the agent's gRPC port, bytes as they are,
 * except SendMessage and SendStreamingMessage, whose request and answers are decoded to ProtoJSON, put
 * through the same rewrites as the HTTP bodies (a REST body and a gRPC message have one JSON shape),
 * and encoded again — message by message on the stream, keeping its timing.
 */

type Json = Record<string, unknown>;

/** A protobuf message type as this proxy uses it: bytes ↔ SDK object ↔ ProtoJSON. */
interface Codec {
  decode(bytes: Buffer): unknown;
  encode(value: unknown): Buffer;
  toJSON(value: unknown): unknown;
  fromJSON(json: Json): unknown;
}

type Definition = (typeof A2AService)[keyof typeof A2AService];

function codec(
  fns: { toJSON(v: never): unknown; fromJSON(j: Json): unknown },
  side: { serialize: (v: never) => Buffer; deserialize: (b: Buffer) => unknown },
): Codec {
  return {
    decode: (bytes) => side.deserialize(bytes),
    encode: (value) => side.serialize(value as never),
    toJSON: (value) => fns.toJSON(value as never),
    fromJSON: (json) => fns.fromJSON(json),
  };
}

/** Applies a rewrite to one message's bytes; `undefined` drops the message. */
function rewritten(
  bytes: Buffer,
  via: { codec: Codec; rewrite: ((body: Json, path: string) => Json | undefined) | undefined; path: string },
): Buffer | undefined {
  if (!via.rewrite) return bytes;
  const out = via.rewrite(via.codec.toJSON(via.codec.decode(bytes)) as Json, via.path);
  return out === undefined ? undefined : via.codec.encode(via.codec.fromJSON(out));
}

const passthrough = (b: Buffer): Buffer => b;

/** The codecs of the two methods the kit calls; every other method is forwarded untouched. */
function codecsOf(name: string, method: Definition): { request: Codec; response: Codec } | undefined {
  const request = { serialize: method.requestSerialize, deserialize: method.requestDeserialize };
  const response = { serialize: method.responseSerialize, deserialize: method.responseDeserialize };
  if (name === 'sendMessage')
    return { request: codec(SendMessageRequest, request), response: codec(SendMessageResponse, response) };
  if (name === 'sendStreamingMessage')
    return { request: codec(SendMessageRequest, request), response: codec(StreamResponse, response) };
  return undefined;
}

/**
 * Starts a rewriting gRPC proxy in front of the gRPC address `target` (plaintext); closed by the tests'
 * cleanup. Answers `{ address }` (`127.0.0.1:<port>`), to put on the card in place of `target`.
 */
export async function startGrpcRewriteProxy(
  target: string,
  rewrites: Rewrites,
): Promise<{ address: string }> {
  const upstream = new grpc.Client(target, grpc.credentials.createInsecure());
  const applies = !rewrites.transports || rewrites.transports.includes('GRPC');
  const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(A2AService) as [string, Definition][]) {
    const path = method.path;
    const codecs = applies ? codecsOf(name, method) : undefined;
    const request = (bytes: Buffer): Buffer | undefined =>
      codecs ? rewritten(bytes, { codec: codecs.request, rewrite: rewrites.request, path }) : bytes;
    const response = (bytes: Buffer): Buffer | undefined =>
      codecs ? rewritten(bytes, { codec: codecs.response, rewrite: rewrites.response, path }) : bytes;
    definition[name] = {
      path,
      requestStream: false,
      responseStream: method.responseStream,
      requestSerialize: passthrough,
      requestDeserialize: passthrough,
      responseSerialize: passthrough,
      responseDeserialize: passthrough,
    };
    handlers[name] = method.responseStream
      ? (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
          const out = upstream.makeServerStreamRequest(
            path,
            passthrough,
            passthrough,
            request(call.request) ?? call.request,
            call.metadata,
          );
          call.on('cancelled', () => out.cancel());
          out.on('data', (bytes: Buffer) => {
            const forwarded = response(bytes);
            if (forwarded) call.write(forwarded);
          });
          out.on('error', (error: grpc.ServiceError) => call.emit('error', error));
          out.on('end', () => call.end());
        }
      : (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
          upstream.makeUnaryRequest(
            path,
            passthrough,
            passthrough,
            request(call.request) ?? call.request,
            call.metadata,
            (error, bytes) => (error || !bytes ? callback(error) : callback(null, response(bytes) ?? bytes)),
          );
        };
  }
  const server = new grpc.Server();
  server.addService(definition, handlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  onCleanup(() => {
    server.forceShutdown();
    upstream.close();
  });
  return { address: `127.0.0.1:${port}` };
}

import { AgentCard, Message, StreamResponse, Task } from '@a2a-js/sdk';
import type { RequestOptions, Transport } from '@a2a-js/sdk/client';
import { A2AError } from '@a2a-js/sdk/errors';
import * as grpc from '@grpc/grpc-js';
import { isJsonObject } from '../shared/json.js';
import { grpcTransportFactory, grpcUsesTls } from './grpc-client.js';

/**
 * A2A v1.0 over gRPC for black-box readers (the conformance kit, docs/conformance.md "ACMP checks"): one
 * call through the SDK's real gRPC client, its request built from a ProtoJSON message and every answer
 * rendered back as ProtoJSON (A2A v1.0 §5: the gRPC and JSON bindings carry the same messages). The
 * protobuf decoding is lossless for what the kit judges — part media types, data roots, metadata,
 * message and task ids — so an agent's gRPC answer is read as it was sent.
 */

type Json = Record<string, unknown>;

/** One answer in the JSON-RPC shape: `result` (`{task}`, `{message}`, `{statusUpdate}`…) or `error`. */
export type GrpcWireAnswer =
  | { readonly result: Json }
  | { readonly error: { readonly status: string; readonly reason?: string; readonly message: string } };

/** The card's gRPC interface did not answer at all (connection refused, no HTTP/2, TLS mismatch). */
export class GrpcUnreachableError extends Error {
  override readonly name = 'GrpcUnreachableError';
}

/** What a call sends besides the message: service parameters (gRPC metadata) and an abort signal. */
export interface GrpcWireCallOptions {
  readonly headers: Record<string, string>;
  readonly signal: AbortSignal;
}

/** A client of one gRPC interface of a card. */
export interface GrpcWire {
  /** SendMessage: the answer, or an `error` for a gRPC status. @throws GrpcUnreachableError */
  send(message: Json, options: GrpcWireCallOptions): Promise<GrpcWireAnswer>;
  /**
   * SendStreamingMessage: every event as it arrives; a gRPC status ends the stream as a last `error`.
   * @throws GrpcUnreachableError; the signal's reason when it aborts.
   */
  stream(message: Json, options: GrpcWireCallOptions): AsyncGenerator<GrpcWireAnswer>;
}

/** A gRPC status code by name (`UNAUTHENTICATED (16)`). */
function statusName(code: unknown): string {
  if (typeof code !== 'number') return `status ${String(code)}`;
  const name: string | undefined = grpc.status[code];
  return name ? `${name} (${code})` : `status ${code}`;
}

/** A thrown call error as an answer, or rethrown: unreachable, or aborted by the caller. */
function errorAnswer(error: unknown, url: string, signal: AbortSignal): GrpcWireAnswer {
  if (signal.aborted) throw signal.reason;
  if (!(error instanceof A2AError)) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new GrpcUnreachableError(`gRPC ${url} does not answer: ${reason}`, { cause: error });
  }
  const status = 'status' in error ? error.status : undefined;
  return { error: { status: statusName(status), reason: error.reason, message: error.message } };
}

function requestOf(message: Json): Parameters<Transport['sendMessage']>[0] {
  return { tenant: '', message: Message.fromJSON(message), configuration: undefined, metadata: undefined };
}

function callOptions(options: GrpcWireCallOptions): RequestOptions {
  return { serviceParameters: options.headers, signal: options.signal };
}

/** A ProtoJSON value as an object (the SDK's `toJSON` is typed `unknown`). */
const json = (value: unknown): Json => (isJsonObject(value) ? value : {});

/**
 * A client of the card's gRPC interface at `url` (`host:port`), TLS as {@link grpcUsesTls} decides,
 * trusting `caCert` beside the system roots.
 */
export async function createGrpcWire(options: {
  url: string;
  card: unknown;
  caCert?: string | undefined;
}): Promise<GrpcWire> {
  const card = AgentCard.fromJSON(options.card);
  const factory = grpcTransportFactory({ tls: grpcUsesTls(card), caCert: options.caCert });
  const transport = await factory.create(options.url, card);
  return {
    async send(message, call) {
      try {
        const reply = await transport.sendMessage(requestOf(message), callOptions(call));
        // SendMessageResponse is a oneof: a Message has a `messageId`, a Task none.
        return 'messageId' in reply
          ? { result: { message: json(Message.toJSON(reply)) } }
          : { result: { task: json(Task.toJSON(reply)) } };
      } catch (error) {
        return errorAnswer(error, options.url, call.signal);
      }
    },
    async *stream(message, call) {
      let ended: GrpcWireAnswer | undefined;
      try {
        for await (const event of transport.sendMessageStream(requestOf(message), callOptions(call)))
          yield { result: json(StreamResponse.toJSON(event)) };
      } catch (error) {
        ended = errorAnswer(error, options.url, call.signal);
      }
      if (ended) yield ended;
    },
  };
}

import * as grpc from '@grpc/grpc-js';
import { Message, type SendMessageResponse } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import type { LoadSpec } from './protocol.js';

/**
 * The gRPC side of the load generator: plain grpc-js clients (one connection per worker) built from the
 * SDK's service definition, so no client-side A2A layer is measured.
 */

/** One unary SendMessage over gRPC. */
export interface GrpcCall {
  grpc: { request: object; metadata: Record<string, string>; check(response: SendMessageResponse): number };
}

/** The data of the first part of a SendMessage response's message (or task status message). */
function replyData(response: SendMessageResponse): Record<string, unknown> | undefined {
  const payload = response.payload;
  const message =
    payload?.$case === 'message'
      ? payload.value
      : payload?.$case === 'task'
        ? payload.value.status?.message
        : undefined;
  const content = message?.parts[0]?.content;
  return content?.$case === 'data' ? (content.value as Record<string, unknown>) : undefined;
}

export function grpcSendMessage(message: object, extension: string, key: string): GrpcCall {
  return {
    grpc: {
      request: {
        tenant: '',
        message: Message.fromJSON(message),
        configuration: undefined,
        metadata: undefined,
      },
      metadata: { 'a2a-version': '1.0', 'a2a-extensions': extension },
      check: (response) => {
        if (replyData(response)?.[key] === undefined)
          throw new Error(`no ${key}: ${JSON.stringify(replyData(response)).slice(0, 300)}`);
        return 1;
      },
    },
  };
}

const GrpcA2A = grpc.makeGenericClientConstructor(A2AService, 'A2AService');

/** A gRPC client with its own connection (like one connection of the undici pool). */
export function grpcClient(spec: LoadSpec): grpc.Client {
  if (!spec.grpcUrl) throw new Error('the server serves no gRPC');
  const credentials = spec.caCert
    ? grpc.credentials.createSsl(Buffer.from(spec.caCert))
    : grpc.credentials.createInsecure();
  return new GrpcA2A(spec.grpcUrl, credentials, { 'grpc.use_local_subchannel_pool': 1 });
}

type UnaryMethod = (
  request: object,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null, response: SendMessageResponse) => void,
) => void;

export function grpcSend(client: grpc.Client, call: GrpcCall['grpc']): Promise<SendMessageResponse> {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(call.metadata)) metadata.set(k, v);
  const send = (client as unknown as { sendMessage: UnaryMethod }).sendMessage.bind(client);
  return new Promise((resolve, reject) =>
    send(call.request, metadata, (error, response) => (error ? reject(error) : resolve(response))),
  );
}

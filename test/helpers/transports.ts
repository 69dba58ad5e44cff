import { A2A_ERROR_CODE, A2AError } from '@a2a-js/sdk/errors';
import { Message, StreamResponse, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { normalizeInboundMessageJson } from '../../src/a2a/part-codec.js';
import type { HostFlags } from '../../src/server/config.js';

/**
 * The A2A transports every binding suite runs over (`describe.each(A2A_TRANSPORTS)`): raw JSON-RPC, and
 * gRPC through the SDK's real gRPC client. Tests speak one wire shape — the JSON-RPC response body — and
 * the gRPC side converts: requests from the JSON message (seed spelling accepted, as the host's inbound
 * normaliser does), responses and stream events to canonical ProtoJSON, A2A errors to their JSON-RPC code.
 */
export const A2A_TRANSPORTS = ['jsonrpc', 'grpc'] as const;
export type A2ATransport = (typeof A2A_TRANSPORTS)[number];

/** A host as the transport helpers need it. */
export interface WireHost {
  url: string;
  grpcUrl: string | undefined;
  transport: A2ATransport;
  caCert?: string | undefined;
}

/** The host flags a transport needs (gRPC on an ephemeral port). */
export function transportFlags(transport: A2ATransport): HostFlags {
  return transport === 'grpc' ? { 'grpc-port': '0' } : {};
}

/** The `transport` option of our clients (buyer, ACPspec sender, `createA2AClient`) for a test transport. */
export function clientTransport(transport: A2ATransport): 'JSONRPC' | 'GRPC' {
  return transport === 'grpc' ? 'GRPC' : 'JSONRPC';
}

/** A JSON-RPC-shaped answer: `result` (ProtoJSON) or `error` (JSON-RPC code). */
export interface WireAnswer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; grpcStatus?: number };
}

const clients = new Map<string, Promise<Client>>();

/** The SDK's gRPC client for a host (one per host, version and token). */
function grpcClientFor(
  host: WireHost,
  options: { version?: '1.0' | '0.3'; token?: string } = {},
): Promise<Client> {
  if (!host.grpcUrl) throw new Error('the host serves no gRPC (start it with transportFlags("grpc"))');
  const key = `${host.grpcUrl}|${options.version ?? '1.0'}|${options.token ?? ''}`;
  let client = clients.get(key);
  if (!client) {
    client = fetchAgentCard(host.url, { caCert: host.caCert }).then((card) =>
      createA2AClient(card, {
        transport: 'GRPC',
        caCert: host.caCert,
        protocolVersion: options.version,
        token: options.token,
      }),
    );
    clients.set(key, client);
  }
  return client;
}

/** Headers a test sends, as gRPC metadata (A2A service parameters); HTTP-only headers are dropped. */
function serviceParameters(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([k]) => /^(a2a-|x-a2a-|authorization$)/i.test(k)),
  );
}

/** A raw JSON message (seed or ProtoJSON spelling) as the SDK message a gRPC client sends. */
export function sdkMessage(json: unknown): Message {
  return Message.fromJSON(normalizeInboundMessageJson(json, 'v1'));
}

function errorAnswer(error: unknown): WireAnswer {
  if (!(error instanceof A2AError)) throw error;
  const codes = A2A_ERROR_CODE as Record<string, number>;
  const code =
    codes[error.reason] ??
    (error.reason === 'EXTENDED_AGENT_CARD_NOT_CONFIGURED'
      ? codes.EXTENDED_CARD_NOT_CONFIGURED
      : undefined) ??
    codes.INTERNAL_ERROR!;
  return { error: { code, message: error.message, grpcStatus: (error as { status?: number }).status } };
}

/** SendMessage over gRPC, answered in the JSON-RPC shape (`result.task` or `result.message`). */
export async function grpcSend(
  host: WireHost,
  message: unknown,
  headers: Record<string, string> = {},
  configuration?: Record<string, unknown>,
): Promise<WireAnswer> {
  const client = await grpcClientFor(host);
  try {
    const reply = await client.sendMessage(
      {
        tenant: '',
        message: sdkMessage(message),
        configuration: configuration as never,
        metadata: undefined,
      },
      { serviceParameters: serviceParameters(headers) },
    );
    return { result: 'id' in reply ? { task: Task.toJSON(reply) } : { message: Message.toJSON(reply) } };
  } catch (error) {
    return errorAnswer(error);
  }
}

/** SendStreamingMessage (or SubscribeToTask with `subscribe`) over gRPC: every event as ProtoJSON. */
export async function* grpcStream(
  host: WireHost,
  request: { message: unknown } | { subscribe: string },
  headers: Record<string, string> = {},
): AsyncGenerator<Record<string, unknown>> {
  const client = await grpcClientFor(host);
  const options = { serviceParameters: serviceParameters(headers) };
  const events =
    'message' in request
      ? client.sendMessageStream(
          { tenant: '', message: sdkMessage(request.message), configuration: undefined, metadata: undefined },
          options,
        )
      : client.resubscribeTask({ tenant: '', id: request.subscribe }, options);
  for await (const event of events) yield StreamResponse.toJSON(event) as Record<string, unknown>;
}

/** GetTask or CancelTask over gRPC, answered in the JSON-RPC shape. */
export async function grpcCall(
  host: WireHost,
  method: 'GetTask' | 'CancelTask',
  id: string,
  headers: Record<string, string> = {},
): Promise<WireAnswer> {
  const client = await grpcClientFor(host);
  const options = { serviceParameters: serviceParameters(headers) };
  try {
    const task =
      method === 'GetTask'
        ? await client.getTask({ tenant: '', id, historyLength: undefined }, options)
        : await client.cancelTask({ tenant: '', id, metadata: undefined }, options);
    return { result: Task.toJSON(task) as Record<string, unknown> };
  } catch (error) {
    return errorAnswer(error);
  }
}

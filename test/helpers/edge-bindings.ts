import * as grpc from '@grpc/grpc-js';
import {
  CancelTaskRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { onCleanup } from './cleanup.js';
import { sendRaw } from './wire-reply.js';

/**
 * One request sent over every binding and its answer reduced to a class, so a table of bad inputs can
 * compare bindings (docs/host.md "Bad input"): `invalid` (JSON-RPC -32602, REST 400, gRPC
 * INVALID_ARGUMENT, MCP -32602), `not_found` (JSON-RPC -32001, REST 404, gRPC NOT_FOUND; MCP: ACMP's
 * -32602 `unknown task`), `ok`, or anything else spelled out (`-32603`, `500`, `grpc 13`).
 */

/** An A2A request in ProtoJSON (v1.0), method by method. */
export type A2ARequest =
  | {
      method: 'SendMessage';
      message: Record<string, unknown>;
      tenant?: string;
      metadata?: Record<string, unknown>;
    }
  | { method: 'GetTask' | 'CancelTask' | 'SubscribeToTask'; id: string; tenant?: string }
  | { method: 'CreatePushConfig'; taskId: string; id: string }
  | { method: 'GetPushConfig'; taskId: string; id: string };

/** A raw value spliced into a request's JSON text where the placeholder string stands. */
export interface Splice {
  placeholder: string;
  json: string;
  /** Set when the value is `depth` nested empty arrays (gRPC then sends hand-built bytes, see below). */
  depth?: number;
}

/** The reduced answer: its class and the size of what the wire carried. */
export interface EdgeAnswer {
  cls: string;
  bytes: number;
  text: string;
}

const V1 = { 'A2A-Version': '1.0' };

function spliced(value: unknown, splice?: Splice): string {
  const text = JSON.stringify(value);
  return splice ? text.replace(JSON.stringify(splice.placeholder), splice.json) : text;
}

function answerOf(text: string, cls: string): EdgeAnswer {
  return { cls, bytes: Buffer.byteLength(text), text };
}

/** The first JSON object of a reply that may be an SSE stream. */
function firstJson(text: string): unknown {
  const data = /^data: (.*)$/m.exec(text)?.[1];
  try {
    return JSON.parse(data ?? text) as unknown;
  } catch {
    return undefined;
  }
}

function rpcClass(body: unknown): string {
  const error = (body as { error?: { code?: number } } | undefined)?.error;
  if (!error) return body === undefined ? 'no reply' : 'ok';
  if (error.code === -32602) return 'invalid';
  if (error.code === -32001) return 'not_found';
  return String(error.code);
}

const RPC_METHOD: Record<A2ARequest['method'], string> = {
  SendMessage: 'SendMessage',
  GetTask: 'GetTask',
  CancelTask: 'CancelTask',
  SubscribeToTask: 'SubscribeToTask',
  CreatePushConfig: 'CreateTaskPushNotificationConfig',
  GetPushConfig: 'GetTaskPushNotificationConfig',
};

function paramsOf(request: A2ARequest): Record<string, unknown> {
  const { method: _method, ...params } = request;
  if (request.method === 'CreatePushConfig')
    return { taskId: request.taskId, id: request.id, url: 'https://example.com/hook' };
  return params;
}

/** The request over JSON-RPC (`/a2a/jsonrpc`, A2A-Version 1.0). */
export async function overJsonRpc(url: string, request: A2ARequest, splice?: Splice): Promise<EdgeAnswer> {
  const body = spliced(
    { jsonrpc: '2.0', id: 1, method: RPC_METHOD[request.method], params: paramsOf(request) },
    splice,
  );
  const reply = await sendRaw(`${url}/a2a/jsonrpc`, { body, headers: V1 });
  return answerOf(reply.text, rpcClass(firstJson(reply.text)));
}

/** The request over HTTP+JSON (`/a2a/rest`, the v1.0 routes). */
export async function overRest(url: string, request: A2ARequest, splice?: Splice): Promise<EdgeAnswer> {
  const base = `${url}/a2a/rest`;
  const tenant =
    'tenant' in request && request.tenant !== undefined ? `/${encodeURIComponent(request.tenant)}` : '';
  const e = encodeURIComponent;
  let target: { path: string; method: string; body?: string };
  switch (request.method) {
    case 'SendMessage':
      target = {
        path: `${tenant}/message:send`,
        method: 'POST',
        body: spliced({ message: request.message, metadata: request.metadata }, splice),
      };
      break;
    case 'GetTask':
      target = { path: `${tenant}/tasks/${e(request.id)}`, method: 'GET' };
      break;
    case 'CancelTask':
      target = { path: `${tenant}/tasks/${e(request.id)}:cancel`, method: 'POST', body: '{}' };
      break;
    case 'SubscribeToTask':
      target = { path: `${tenant}/tasks/${e(request.id)}:subscribe`, method: 'GET' };
      break;
    case 'CreatePushConfig':
      target = {
        path: `/tasks/${e(request.taskId)}/pushNotificationConfigs`,
        method: 'POST',
        body: JSON.stringify({ id: request.id, url: 'https://example.com/hook' }),
      };
      break;
    case 'GetPushConfig':
      target = {
        path: `/tasks/${e(request.taskId)}/pushNotificationConfigs/${e(request.id)}`,
        method: 'GET',
      };
      break;
  }
  const reply = await sendRaw(`${base}${target.path}`, {
    method: target.method,
    headers: V1,
    ...(target.body === undefined ? {} : { body: target.body }),
  });
  const cls =
    reply.status === 400
      ? 'invalid'
      : reply.status === 404
        ? 'not_found'
        : reply.status === 200
          ? 'ok'
          : String(reply.status);
  return answerOf(reply.text, cls);
}

type RawClient = grpc.Client & Record<string, (...args: unknown[]) => unknown>;
const RawA2A = grpc.makeGenericClientConstructor(A2AService, 'lf.a2a.v1.A2AService');
const clients = new Map<string, RawClient>();

function grpcClient(target: string): RawClient {
  let client = clients.get(target);
  if (!client) {
    client = new RawA2A(target, grpc.credentials.createInsecure()) as unknown as RawClient;
    clients.set(target, client);
    onCleanup(() => {
      client!.close();
      clients.delete(target);
    });
  }
  return client;
}

function grpcClass(code: grpc.status): string {
  if (code === grpc.status.OK) return 'ok';
  if (code === grpc.status.INVALID_ARGUMENT) return 'invalid';
  if (code === grpc.status.NOT_FOUND) return 'not_found';
  return `grpc ${code}`;
}

/** The request as the SDK's protobuf message (decoded from the same ProtoJSON the other bindings send). */
function grpcRequest(request: A2ARequest, splice?: Splice): { method: string; message: unknown } {
  const params = JSON.parse(spliced(paramsOf(request), splice)) as Record<string, unknown>;
  switch (request.method) {
    case 'SendMessage':
      return { method: 'sendMessage', message: SendMessageRequest.fromJSON(params) };
    case 'GetTask':
      return { method: 'getTask', message: GetTaskRequest.fromJSON(params) };
    case 'CancelTask':
      return { method: 'cancelTask', message: CancelTaskRequest.fromJSON(params) };
    case 'SubscribeToTask':
      return { method: 'subscribeToTask', message: SubscribeToTaskRequest.fromJSON(params) };
    case 'CreatePushConfig':
      return {
        method: 'createTaskPushNotificationConfig',
        message: TaskPushNotificationConfig.fromJSON(params),
      };
    case 'GetPushConfig':
      return {
        method: 'getTaskPushNotificationConfig',
        message: GetTaskPushNotificationConfigRequest.fromJSON(params),
      };
  }
}

function varint(n: number): number[] {
  const out: number[] = [];
  for (; n > 127; n >>>= 7) out.push((n & 127) | 128);
  out.push(n);
  return out;
}

function field(tag: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag, ...varint(body.length)]), body]);
}

/**
 * The protobuf bytes of a SendMessageRequest whose one data part is `depth` nested empty lists, built by
 * hand: the SDK's encoder (like its decoder) recurses and runs out of stack beyond ~2,500 levels, but a
 * client in another language need not.
 */
function deepSendMessage(depth: number): Buffer {
  // google.protobuf.Value.list_value = 6; ListValue.values = 1; Part.data = 4; Message: message_id = 1,
  // role = 4, parts = 5; SendMessageRequest.message = 2.
  let value: Buffer = Buffer.from([50, 0]);
  for (let level = 1; level < depth; level++) value = field(50, field(10, value));
  const message = Buffer.concat([
    field(10, Buffer.from('m')),
    Buffer.from([32, 1]),
    field(42, field(34, value)),
  ]);
  return field(18, message);
}

/** Every call ends within 10 s (a call the host never answers is DEADLINE_EXCEEDED, `grpc 4`). */
const deadline = (): Date => new Date(Date.now() + 10_000);

/** The request over gRPC (`lf.a2a.v1.A2AService`, `a2a-version: 1.0`), with a raw grpc-js client. */
export function overGrpc(target: string, request: A2ARequest, splice?: Splice): Promise<EdgeAnswer> {
  const client = grpcClient(target);
  const metadata = new grpc.Metadata();
  metadata.set('a2a-version', '1.0');
  const settle = (error: grpc.ServiceError | null): EdgeAnswer =>
    answerOf(error ? `${error.details}` : '', grpcClass(error ? error.code : grpc.status.OK));
  if (splice?.depth !== undefined) {
    const bytes = deepSendMessage(splice.depth);
    return new Promise((resolve) => {
      client.makeUnaryRequest(
        '/lf.a2a.v1.A2AService/SendMessage',
        (b: Buffer) => b,
        (b: Buffer) => b,
        bytes,
        metadata,
        { deadline: deadline() },
        (error) => resolve(settle(error)),
      );
    });
  }
  const { method, message } = grpcRequest(request, splice);
  if (method === 'subscribeToTask') {
    return new Promise((resolve) => {
      const call = client[method]!(message, metadata, {
        deadline: deadline(),
      }) as grpc.ClientReadableStream<unknown>;
      call.on('data', () => {
        call.cancel();
        resolve(settle(null));
      });
      call.on('error', (error: grpc.ServiceError) => resolve(settle(error)));
      call.on('end', () => resolve(settle(null)));
    });
  }
  return new Promise((resolve) => {
    client[method]!(message, metadata, { deadline: deadline() }, (error: grpc.ServiceError | null) =>
      resolve(settle(error)),
    );
  });
}

/** `acmp/invoke` or `acmp/cancel` (request form) over MCP Streamable HTTP, as a raw 2026-07-28 request. */
export async function overMcp(
  url: string,
  method: 'acmp/invoke' | 'acmp/cancel',
  params: Record<string, unknown>,
  splice?: Splice,
): Promise<EdgeAnswer> {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const body = spliced({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta } }, splice);
  const reply = await sendRaw(`${url}/mcp`, {
    body,
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
    },
  });
  return answerOf(reply.text, mcpClass(firstJson(reply.text)));
}

/** An MCP reply's class: ACMP's `unknown task` is the binding's not-found answer. */
export function mcpClass(body: unknown): string {
  const error = (body as { error?: { code?: number; data?: { detail?: string } } } | undefined)?.error;
  if (!error) return body === undefined ? 'no reply' : 'ok';
  if (error.code === -32602) return error.data?.detail === 'unknown task' ? 'not_found' : 'invalid';
  return String(error.code);
}

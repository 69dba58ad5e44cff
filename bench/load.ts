import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import { Message, type SendMessageResponse } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { Pool } from 'undici';
import { ACMP_EXTENSION_URI, ACMP_MEDIA_TYPE } from '../src/acmp/constants.js';
import { ACP_EXTENSION_URI, ACP_MEDIA_TYPE, ACP_HTTP_ROUTES } from '../src/acpspec/constants.js';
import type { LoadResult, LoadSpec, LoadToParent, ParentToLoad, Scenario } from './protocol.js';
import { acpChain } from './workload.js';

/**
 * The load generator, in its own process: a keep-alive undici pool with one connection per concurrent
 * worker, raw request bodies (the wire the SDK's client sends, captured once) so the generator stays
 * cheap and the server is the bottleneck; for gRPC, one plain grpc-js client (own connection) per worker
 * built from the SDK's service definition, so no client-side A2A layer is measured either. Every response
 * is checked.
 */

interface HttpCall {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Checks a response body; returns the number of stream events, or throws. */
  check(status: number, text: string): number;
}

/** One unary SendMessage over gRPC. */
interface GrpcCall {
  grpc: { request: object; metadata: Record<string, string>; check(response: SendMessageResponse): number };
}

type Call = HttpCall | GrpcCall;

const JSONRPC = '/a2a/jsonrpc';
let seq = 0;
const uid = (): string => `${process.pid}-${++seq}-${Math.random().toString(36).slice(2, 10)}`;

function rpc(
  method: 'SendMessage' | 'SendStreamingMessage',
  message: object,
  extension?: string,
): Pick<HttpCall, 'path' | 'headers' | 'body'> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'a2a-version': '1.0',
    accept: method === 'SendMessage' ? 'application/json' : 'text/event-stream',
  };
  if (extension) headers['a2a-extensions'] = extension;
  return {
    path: JSONRPC,
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method, params: { message, configuration: {} }, id: 1 }),
  };
}

function userText(text: string): object {
  return { messageId: `m-${uid()}`, role: 'ROLE_USER', parts: [{ text, mediaType: 'text/plain' }] };
}

function acmpInvoke(params: Record<string, unknown>): object {
  const taskId = `task_${uid()}`;
  return {
    messageId: `m-${uid()}`,
    taskId,
    role: 'ROLE_USER',
    parts: [
      {
        data: { acmp_method: 'acmp/invoke', params: { task_id: taskId, ...params } },
        mediaType: ACMP_MEDIA_TYPE,
      },
    ],
    extensions: [ACMP_EXTENSION_URI],
  };
}

/**
 * `acmp/invoke` over MCP Streamable HTTP, 2026-07-28: the per-request `_meta` envelope and the mirrored
 * headers the official client sends (docs/acmp-mcp-binding.md §1).
 */
function mcpInvoke(params: Record<string, unknown>): Pick<HttpCall, 'path' | 'headers' | 'body'> {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return {
    path: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'acmp/invoke',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'acmp/invoke',
      params: { task_id: `task_${uid()}`, ...params, _meta },
    }),
  };
}

function jsonResult(status: number, text: string, marker: string): number {
  if (status !== 200 || !text.includes(marker) || text.startsWith('{"jsonrpc":"2.0","id":1,"error"'))
    throw new Error(`status ${status}: ${text.slice(0, 300)}`);
  return 1;
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

function grpcSendMessage(message: object, extension: string, key: string): GrpcCall {
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

function sseEvents(status: number, text: string, expected: number): number {
  const events = text.split('\n\n').filter((e) => e.startsWith('data:')).length;
  if (status !== 200 || !text.includes('TASK_STATE_COMPLETED') || events < expected)
    throw new Error(`status ${status}, ${events} events: ${text.slice(0, 300)}`);
  return events;
}

/** A factory of calls for one worker (ACPspec workers each own a chain of envelopes). */
function callFactory(scenario: Scenario): () => () => Call {
  switch (scenario.kind) {
    case 'sdk-message':
      return () => () => ({
        ...rpc('SendMessage', userText('message')),
        check: (s, t) => jsonResult(s, t, '"message"'),
      });
    case 'sdk-task':
      return () => () => ({
        ...rpc('SendMessage', userText('task')),
        check: (s, t) => jsonResult(s, t, 'TASK_STATE_COMPLETED'),
      });
    case 'sdk-stream':
      return () => () => ({
        ...rpc('SendStreamingMessage', userText(`stream:${scenario.events}`)),
        check: (s, t) => sseEvents(s, t, scenario.events + 2),
      });
    case 'acmp-invoke':
      return () => () => ({
        ...rpc(
          'SendMessage',
          acmpInvoke({ capability: 'noop', input: { type: 'text', data: 'x' } }),
          ACMP_EXTENSION_URI,
        ),
        check: (s, t) => jsonResult(s, t, 'acmp_result'),
      });
    case 'mcp-invoke':
      return () => () => ({
        ...mcpInvoke({ capability: 'noop', input: { type: 'text', data: 'x' } }),
        check: (s, t) => jsonResult(s, t, '"cost_cu"'),
      });
    case 'acmp-stream':
      return () => () => ({
        ...rpc(
          'SendStreamingMessage',
          acmpInvoke({
            capability: 'chunks',
            stream: true,
            input: { type: 'json', data: { n: scenario.chunks, heartbeats: scenario.heartbeats } },
          }),
          ACMP_EXTENSION_URI,
        ),
        check: (s, t) => sseEvents(s, t, scenario.chunks + 2),
      });
    case 'acp-a2a':
      return () => {
        const chain = acpChain();
        return () => {
          const message = {
            messageId: `m-${uid()}`,
            role: 'ROLE_USER',
            parts: [{ data: chain.next(), mediaType: ACP_MEDIA_TYPE }],
            extensions: [ACP_EXTENSION_URI],
          };
          return {
            ...rpc('SendMessage', message, ACP_EXTENSION_URI),
            check: (s, t) => jsonResult(s, t, 'acp_ack'),
          };
        };
      };
    case 'acmp-invoke-grpc':
      return () => () =>
        grpcSendMessage(
          acmpInvoke({ capability: 'noop', input: { type: 'text', data: 'x' } }),
          ACMP_EXTENSION_URI,
          'acmp_result',
        );
    case 'acp-a2a-grpc':
      return () => {
        const chain = acpChain();
        return () =>
          grpcSendMessage(
            {
              messageId: `m-${uid()}`,
              role: 'ROLE_USER',
              parts: [{ data: chain.next(), mediaType: ACP_MEDIA_TYPE }],
              extensions: [ACP_EXTENSION_URI],
            },
            ACP_EXTENSION_URI,
            'acp_ack',
          );
      };
    case 'acp-https':
      return () => {
        const chain = acpChain();
        return () => ({
          path: ACP_HTTP_ROUTES.envelopes,
          headers: { 'content-type': ACP_MEDIA_TYPE },
          body: JSON.stringify(chain.next()),
          check: (s, t) => {
            // 201 for a new envelope per the route's contract; the current route answers 200 (reported).
            if ((s !== 201 && s !== 200) || !t.includes('acp_ack'))
              throw new Error(`status ${s}: ${t.slice(0, 300)}`);
            return 1;
          },
        });
      };
  }
}

const GrpcA2A = grpc.makeGenericClientConstructor(A2AService, 'A2AService');

/** A gRPC client with its own connection (like one connection of the undici pool). */
function grpcClient(spec: LoadSpec): grpc.Client {
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

function grpcSend(client: grpc.Client, call: GrpcCall['grpc']): Promise<SendMessageResponse> {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(call.metadata)) metadata.set(k, v);
  const send = (client as unknown as { sendMessage: UnaryMethod }).sendMessage.bind(client);
  return new Promise((resolve, reject) =>
    send(call.request, metadata, (error, response) => (error ? reject(error) : resolve(response))),
  );
}

async function drive(pool: Pool, spec: LoadSpec, total: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let issued = 0;
  let events = 0;
  let errors = 0;
  let firstError: string | undefined;
  const factory = callFactory(spec.scenario);
  const clients: grpc.Client[] = [];
  const worker = async (): Promise<void> => {
    const nextCall = factory();
    let client: grpc.Client | undefined;
    while (issued < total) {
      issued++;
      const call = nextCall();
      const started = performance.now();
      try {
        if ('grpc' in call) {
          client ??= clients[clients.push(grpcClient(spec)) - 1]!;
          const response = await grpcSend(client, call.grpc);
          events += call.grpc.check(response);
        } else {
          const res = await pool.request({
            path: call.path,
            method: 'POST',
            headers: call.headers,
            body: call.body,
          });
          const text = await res.body.text();
          events += call.check(res.statusCode, text);
        }
        latencies.push(performance.now() - started);
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  const elapsedMs = performance.now() - started;
  for (const client of clients) client.close();
  latencies.sort((a, b) => a - b);
  return { count: total, elapsedMs, latencies, events, errors, firstError };
}

const send = (message: LoadToParent): void => void process.send?.(message);
let pending: LoadSpec | undefined;
let pool: Pool | undefined;

process.on('message', (message: ParentToLoad) => {
  void (async () => {
    try {
      if (message.type === 'run') {
        pending = message.spec;
        pool = new Pool(pending.url, {
          connections: pending.concurrency,
          pipelining: 1,
          ...(pending.caCert ? { connect: { ca: pending.caCert } } : {}),
        });
        if (pending.warmup > 0) await drive(pool, pending, pending.warmup);
        send({ type: 'warmed' });
      } else if (message.type === 'go' && pending && pool) {
        const result = await drive(pool, pending, pending.count);
        await pool.close();
        send({ type: 'result', result });
      }
    } catch (error) {
      send({
        type: 'error',
        message: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    }
  })();
});

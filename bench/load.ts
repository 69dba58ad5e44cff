import type * as grpc from '@grpc/grpc-js';
import { Pool } from 'undici';
import { ACMP_EXTENSION_URI, ACMP_MEDIA_TYPE } from '../src/acmp/wire/constants.js';
import { ACP_EXTENSION_URI, ACP_MEDIA_TYPE, ACP_HTTP_ROUTES } from '../src/acpspec/constants.js';
import type { LoadSpec, LoadToParent, ParentToLoad, Scenario } from './protocol.js';
import { grpcClient, grpcSend, grpcSendMessage, type GrpcCall } from './load-grpc.js';
import { drive, measuredPhase, warmUp, type SendOne } from './load-driver.js';
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
          acmpInvoke({
            capability: scenario.capability ?? 'noop',
            input: scenario.input ?? { type: 'text', data: 'x' },
          }),
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

/** One `SendOne` per worker: its own call factory (ACPspec chains) and, for gRPC, its own connection. */
function workersFor(pool: Pool, spec: LoadSpec, clients: grpc.Client[]): SendOne[] {
  const factory = callFactory(spec.scenario);
  return Array.from({ length: spec.concurrency }, () => {
    const nextCall = factory();
    let client: grpc.Client | undefined;
    return async () => {
      const call = nextCall();
      if ('grpc' in call) {
        client ??= clients[clients.push(grpcClient(spec)) - 1]!;
        return call.grpc.check(await grpcSend(client, call.grpc));
      }
      const res = await pool.request({
        path: call.path,
        method: 'POST',
        headers: call.headers,
        body: call.body,
      });
      return call.check(res.statusCode, await res.body.text());
    };
  });
}

const send = (message: LoadToParent): void => void process.send?.(message);
let pending: { spec: LoadSpec; pool: Pool; workers: SendOne[]; clients: grpc.Client[] } | undefined;

process.on('message', (message: ParentToLoad) => {
  void (async () => {
    try {
      if (message.type === 'run') {
        const spec = message.spec;
        const pool = new Pool(spec.url, {
          connections: spec.concurrency,
          pipelining: 1,
          ...(spec.caCert ? { connect: { ca: spec.caCert } } : {}),
        });
        const clients: grpc.Client[] = [];
        const workers = workersFor(pool, spec, clients);
        pending = { spec, pool, workers, clients };
        if (spec.steady) {
          send({ type: 'warmed', warmUp: await warmUp(workers, spec.steady) });
          return;
        }
        if (spec.warmup > 0) await drive(workers, { count: spec.warmup });
        send({ type: 'warmed' });
      } else if (message.type === 'go' && pending) {
        const { spec, pool, workers, clients } = pending;
        const until = spec.steady ? measuredPhase(spec.steady) : { count: spec.count };
        const result = await drive(workers, until, spec.steady?.windowMs);
        for (const client of clients) client.close();
        await pool.close();
        // Windows mean something only for a steady-state phase (a fixed count has no length to cut).
        send({ type: 'result', result: spec.steady ? result : { ...result, windows: undefined } });
      }
    } catch (error) {
      send({
        type: 'error',
        message: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    }
  })();
});

import {
  Client,
  ProtocolError,
  StreamableHTTPClientTransport,
  type RequestOptions,
} from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { z } from 'zod';
import { acmpHost, newTaskId } from '../acmp/helpers.js';
import { onCleanup } from '../helpers/host.js';

/**
 * Helpers of the ACMP-over-MCP tests: hosts with named tokens, the official MCP client (@modelcontextprotocol
 * /client 2.x) in either era over Streamable HTTP or stdio, and the notifications it received, in order.
 */

/** Two named callers (identities `agent:alice`, `agent:bob`). */
export const ALICE = 'alice-secret-0123456789';
export const BOB = 'bob-secret-0123456789abc';
export const TOKEN_FLAGS = { token: [`alice=${ALICE}`, `bob=${BOB}`] };

/** The two client eras: 2026-07-28 (pinned, per-request `_meta`) and the 2025 `initialize` handshake. */
export const ERAS = ['modern', 'legacy'] as const;
export type Era = (typeof ERAS)[number];

/** Results and errors are ACMP objects; the client parses them loosely and the tests look inside. */
export const Loose = z.looseObject({});

export { acmpHost, newTaskId };

/** The MCP endpoint of a host. */
export function mcpUrl(host: { url: string }): string {
  return `${host.url}/mcp`;
}

/** An official MCP client with every notification it receives recorded in arrival order. */
export interface RecordingClient {
  readonly client: Client;
  readonly notifications: { method: string; params: Record<string, unknown> }[];
}

/** The official client of `era`, recording every notification (closed by the test cleanup). */
export function recordingClient(era: Era): RecordingClient {
  const client = new Client(
    { name: 'a2a-commerce-tests', version: '1.0.0' },
    era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const notifications: RecordingClient['notifications'] = [];
  client.fallbackNotificationHandler = (n) => {
    notifications.push({ method: n.method, params: n.params ?? {} });
    return Promise.resolve();
  };
  onCleanup(() => client.close());
  return { client, notifications };
}

/** Connects the official client to a host's MCP endpoint (closed by the test cleanup). */
export async function httpClient(host: { url: string }, era: Era, token?: string): Promise<RecordingClient> {
  const rec = recordingClient(era);
  const authProvider = token === undefined ? undefined : { token: () => Promise.resolve(token) };
  await rec.client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl(host)), authProvider ? { authProvider } : {}),
  );
  return rec;
}

/** The command that runs `a2a-commerce mcp-stdio` from the sources. */
export function stdioCommand(args: string[]): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: [
      '--import',
      'tsx',
      new URL('../../src/cli/bin.ts', import.meta.url).pathname,
      'mcp-stdio',
      ...args,
    ],
  };
}

/** Spawns `a2a-commerce mcp-stdio` as a real child process and connects the official client over stdio. */
export async function stdioClient(
  era: Era,
  args: string[],
  env: Record<string, string> = {},
): Promise<RecordingClient> {
  const rec = recordingClient(era);
  const transport = new StdioClientTransport({
    ...stdioCommand(args),
    env: { ...getDefaultEnvironment(), ...env },
    stderr: 'ignore',
  });
  await rec.client.connect(transport);
  return rec;
}

/** `acmp/invoke` through the official client. */
export function invoke(
  client: Client,
  params: Record<string, unknown>,
  options?: RequestOptions,
): Promise<Record<string, unknown>> {
  return client.request({ method: 'acmp/invoke', params }, Loose, options);
}

/** Invoke params of the seed's sentiment example with a fresh task_id (override any field). */
export function sentiment(params: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    task_id: newTaskId(),
    capability: 'sentiment-analysis',
    input: { type: 'text', data: 'Revenue grew 12% YoY.' },
    max_price_cu: 0.005,
    ...params,
  };
}

/** A slow-count invoke (n steps of the host's step time, one heartbeat per step). */
export function slowCount(n: number, params: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    task_id: newTaskId(),
    capability: 'slow-count',
    input: { type: 'json', data: { n } },
    max_price_cu: 2,
    ...params,
  };
}

/** The JSON-RPC error a call was answered with (fails the test when it succeeded or failed otherwise). */
export async function rpcError(
  call: Promise<unknown>,
): Promise<{ code: number; message: string; data?: Record<string, unknown> }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ProtocolError)
      return {
        code: error.code,
        message: error.message,
        data: error.data as Record<string, unknown> | undefined,
      };
    throw error;
  }
  throw new Error('expected a JSON-RPC error');
}

/** Resolves once `predicate` holds for a recorded notification. */
export async function notified(
  rec: RecordingClient,
  predicate: (n: RecordingClient['notifications'][number]) => boolean,
): Promise<void> {
  while (!rec.notifications.some(predicate)) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Raw POST to the MCP endpoint (what an SDK would not send: bad credentials, foreign origins, raw bodies). */
export async function postMcp(
  host: { url: string },
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(mcpUrl(host), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const data = /^data: (.*)$/m.exec(text)?.[1];
  try {
    return { status: res.status, body: JSON.parse(data ?? text) as unknown };
  } catch {
    return { status: res.status, body: text };
  }
}

/** The `_meta` envelope and headers of a raw 2026-07-28 request. */
export function modernRequest(
  method: string,
  params: Record<string, unknown> = {},
  id = 1,
): { body: Record<string, unknown>; headers: Record<string, string> } {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return {
    body: { jsonrpc: '2.0', id, method, params: { ...params, _meta } },
    headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method },
  };
}

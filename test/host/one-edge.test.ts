import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { newTaskId } from '../acmp/helpers.js';
import {
  mcpClass,
  overGrpc,
  overJsonRpc,
  overMcp,
  overRest,
  type A2ARequest,
  type EdgeAnswer,
  type Splice,
} from '../helpers/edge-bindings.js';
import { cleanup, onCleanup, shared } from '../helpers/cleanup.js';
import { startTestHost } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { stdioCommand } from '../mcp/helpers.js';

afterEach(cleanup);

/**
 * One edge, every binding (docs/host.md "Bad input"): each bad input is sent over JSON-RPC, HTTP+JSON,
 * gRPC and MCP (HTTP) and must get the same class of answer on each, on SQLite and on PostgreSQL.
 * `invalid` is JSON-RPC -32602 / REST 400 / gRPC INVALID_ARGUMENT / MCP -32602 with the reason;
 * `not_found` is TaskNotFound (-32001 / 404 / NOT_FOUND; over MCP ACMP's own `unknown task`).
 */

const DEEP = 'DEEP-VALUE';

/** A JSON value nested `depth` arrays deep, as text (built without recursion). */
function nested(depth: number): Splice {
  return { placeholder: DEEP, json: `${'['.repeat(depth)}${']'.repeat(depth)}`, depth };
}

function message(fields: Record<string, unknown> = {}, data?: unknown): Record<string, unknown> {
  const part = data === undefined ? { text: 'hello' } : { data };
  return { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [part], ...fields };
}

function invoke(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    task_id: newTaskId(),
    capability: 'sentiment-analysis',
    input: { type: 'text', data: 'fine' },
    max_price_cu: 0.005,
    ...fields,
  };
}

/** A task id of `length` characters that no one created. */
function unknownId(length: number): string {
  return `t${crypto.randomUUID().replaceAll('-', '')}`.padEnd(length, 'x').slice(0, length);
}

interface EdgeCase {
  name: string;
  expected: 'invalid' | 'not_found' | 'ok';
  a2a?: () => A2ARequest;
  /** The ACMP counterpart over MCP (invoke creates a task id, cancel looks one up). */
  mcp?: () => { method: 'acmp/invoke' | 'acmp/cancel'; params: Record<string, unknown> };
  splice?: Splice;
  /** Bindings that cannot carry the input (protobuf strings are UTF-8: no lone surrogate). */
  skip?: readonly Binding[];
  /** What an `invalid` MCP answer must name. */
  reason?: RegExp;
  /** A binding whose transport answers before the host can (spelled out, not skipped). */
  overrides?: Partial<Record<Binding, string>>;
}

const data = (value: unknown) => ({
  a2a: () => ({ method: 'SendMessage', message: message({}, value) }) as const,
});

const CASES: EdgeCase[] = [
  {
    name: 'data nested 6,000 deep',
    expected: 'invalid',
    ...data(DEEP),
    splice: nested(6000),
    reason: /depth/,
  },
  {
    name: 'data nested 2,000 deep',
    expected: 'invalid',
    ...data(DEEP),
    splice: nested(2000),
    reason: /depth/,
  },
  {
    name: "U+0000 in a string of the request's metadata",
    expected: 'invalid',
    a2a: () => ({ method: 'SendMessage', message: message(), metadata: { s: 'a\u0000b' } }),
    mcp: () => ({
      method: 'acmp/invoke',
      params: invoke({ input: { type: 'json', data: { s: 'a\u0000b' } } }),
    }),
    reason: /string/,
  },
  {
    name: 'a lone surrogate',
    expected: 'invalid',
    ...data({ s: 'a\ud800b' }),
    skip: ['grpc'],
    reason: /string/,
  },
  { name: 'an integer of 2^53', expected: 'invalid', ...data({ n: 2 ** 53 }), reason: /number/ },
  {
    name: 'U+0000 in a looked-up task id',
    expected: 'invalid',
    a2a: () => ({ method: 'GetTask', id: 'a\u0000b' }),
    mcp: () => ({ method: 'acmp/invoke', params: invoke({ task_id: 'a\u0000b' }) }),
    reason: /string/,
  },
  ...[37, 44, 128].map((n): EdgeCase => ({
    name: `a ${n}-character context id / task id is stored`,
    expected: 'ok',
    a2a: () => ({ method: 'SendMessage', message: message({ contextId: unknownId(n) }) }),
    mcp: () => ({ method: 'acmp/invoke', params: invoke({ task_id: unknownId(n) }) }),
  })),
  ...[129, 100_000].map((n): EdgeCase => ({
    name: `a ${n}-character context id / task id is refused`,
    expected: 'invalid',
    a2a: () => ({ method: 'SendMessage', message: message({ contextId: unknownId(n) }) }),
    mcp: () => ({ method: 'acmp/invoke', params: invoke({ task_id: unknownId(n) }) }),
    reason: /task_id/,
  })),
  {
    name: 'a 129-character task id of a new message is refused',
    expected: 'invalid',
    a2a: () => ({ method: 'SendMessage', message: message({ taskId: unknownId(129) }) }),
  },
  {
    name: 'a newline in a context id / task id is refused',
    expected: 'invalid',
    a2a: () => ({ method: 'SendMessage', message: message({ contextId: 'ctx\nx' }) }),
    mcp: () => ({ method: 'acmp/invoke', params: invoke({ task_id: 'task\nx' }) }),
    reason: /task_id/,
  },
  {
    name: 'a 256-character tenant is refused',
    expected: 'invalid',
    a2a: () => ({ method: 'SendMessage', message: message(), tenant: 't'.repeat(256) }),
  },
  {
    name: 'a 129-character push-config id is refused on creation',
    expected: 'invalid',
    a2a: () => ({ method: 'CreatePushConfig', taskId: 'task-1', id: 'c'.repeat(129) }),
  },
  {
    name: 'a 40-character push-config id of an unknown task is not found',
    expected: 'not_found',
    a2a: () => ({ method: 'GetPushConfig', taskId: unknownId(40), id: 'c'.repeat(40) }),
  },
  ...(['GetTask', 'CancelTask', 'SubscribeToTask'] as const).flatMap((method) =>
    [37, 44, 128, 129, 100_000].map((n): EdgeCase => ({
      name: `${method} of an unknown ${n}-character id is TaskNotFound`,
      expected: 'not_found',
      a2a: () => ({ method, id: unknownId(n) }),
      // A 100 KB URL is beyond Node's header limit: its HTTP server answers 431 before any route runs.
      ...(n === 100_000 ? { overrides: { rest: '431' } } : {}),
      ...(method === 'CancelTask'
        ? { mcp: () => ({ method: 'acmp/cancel' as const, params: { task_id: unknownId(n) } }) }
        : {}),
    })),
  ),
  {
    name: 'a lookup of an id with a newline is TaskNotFound',
    expected: 'not_found',
    a2a: () => ({ method: 'GetTask', id: 'task\nx' }),
    mcp: () => ({ method: 'acmp/cancel', params: { task_id: 'task\nx' } }),
  },
];

type Binding = 'jsonrpc' | 'rest' | 'grpc' | 'mcp';

const STORES = ['sqlite', ...(process.env.TEST_PG_URL ? ['postgres'] : [])] as const;

describe.each(STORES)('one edge for every binding (%s)', (store) => {
  const theHost = shared(async () =>
    startTestHost({
      flags: {
        'grpc-port': '0',
        'push-allow': ['https://example.com'],
        ...(store === 'postgres' ? { db: await freshPgDatabase() } : {}),
      },
      migrate: true,
      modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 1 }) })],
    }),
  );

  async function answers(c: EdgeCase): Promise<Partial<Record<Binding, EdgeAnswer>>> {
    const host = theHost();
    const out: Partial<Record<Binding, EdgeAnswer>> = {};
    const skip = new Set(c.skip ?? []);
    if (c.a2a) {
      out.jsonrpc = await overJsonRpc(host.url, c.a2a(), c.splice);
      out.rest = await overRest(host.url, c.a2a(), c.splice);
      if (!skip.has('grpc')) out.grpc = await overGrpc(host.grpcUrl!, c.a2a(), c.splice);
    }
    const mcp = c.mcp?.() ?? (c.splice || c.reason ? mcpData(c) : undefined);
    if (mcp) out.mcp = await overMcp(host.url, mcp.method, mcp.params, c.splice);
    return out;
  }

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const got = await answers(c);
    const classes = Object.fromEntries(Object.entries(got).map(([b, a]) => [b, a.cls]));
    const expected = Object.keys(got).map((b) => [b, c.overrides?.[b as Binding] ?? c.expected]);
    expect(classes).toEqual(Object.fromEntries(expected));
    for (const answer of Object.values(got)) {
      expect(answer.bytes).toBeLessThan(2048);
      // Error texts quote at most 64 characters of an id (`unknownId` pads with x).
      if (c.expected !== 'ok') expect(answer.text).not.toContain('x'.repeat(64));
    }
    if (c.expected === 'invalid' && c.reason && got.mcp) expect(got.mcp.text).toMatch(c.reason);
  });
});

/** The MCP counterpart of a value case: the same value as an invoke's `input.data`. */
function mcpData(c: EdgeCase): { method: 'acmp/invoke'; params: Record<string, unknown> } | undefined {
  const request = c.a2a?.();
  if (request?.method !== 'SendMessage') return undefined;
  const part = (request.message.parts as { data?: unknown }[])[0];
  return { method: 'acmp/invoke', params: invoke({ input: { type: 'json', data: part?.data } }) };
}

/** The same profile and id rules on MCP stdio (`a2a-commerce mcp-stdio`, a real child process). */
describe('one edge on MCP stdio', () => {
  const STDIO_CASES: [string, Record<string, unknown>, Splice | undefined, 'invalid' | 'ok', RegExp?][] = [
    ['input.data nested 6,000 deep', deepInvoke(), nested(6000), 'invalid', /depth/],
    ['input.data nested 2,000 deep', deepInvoke(), nested(2000), 'invalid', /depth/],
    ['a newline in task_id', invoke({ task_id: 'task\nx' }), undefined, 'invalid', /task_id/],
    ['a 44-character task_id', invoke({ task_id: unknownId(44) }), undefined, 'ok'],
  ];

  it.each(STDIO_CASES)(
    '%s',
    async (_name, params, splice, expected, reason) => {
      const reply = await stdioRequest('acmp/invoke', params, splice);
      expect(mcpClass(reply)).toBe(expected);
      if (reason) expect(JSON.stringify(reply)).toMatch(reason);
    },
    30_000,
  );
});

function deepInvoke(): Record<string, unknown> {
  return invoke({ input: { type: 'json', data: DEEP } });
}

/**
 * One raw 2026-07-28 request to a fresh `mcp-stdio` child (the official client cannot serialise a value
 * nested 6,000 deep), and the response with its id.
 */
async function stdioRequest(
  method: string,
  params: Record<string, unknown>,
  splice?: Splice,
): Promise<unknown> {
  const { command, args } = stdioCommand(['--db', 'memory']);
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
  onCleanup(() => void child.kill('SIGKILL'));
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  let line = JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta } });
  if (splice) line = line.replace(JSON.stringify(splice.placeholder), splice.json);
  child.stdin.write(`${line}\n`);
  for await (const out of createInterface({ input: child.stdout })) {
    const message = JSON.parse(out) as { id?: unknown };
    if (message.id === 7) {
      child.stdin.end();
      return message;
    }
  }
  throw new Error('mcp-stdio closed without answering');
}

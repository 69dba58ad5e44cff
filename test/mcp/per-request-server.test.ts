import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { createAcmpProvider } from '../../src/acmp/provider/provider.js';
import { createAcpReceiver } from '../../src/acpspec/receiver.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { createAcpMcpContribution } from '../../src/mcp/acp/acp-contribution.js';
import type { McpCall, McpContribution } from '../../src/mcp/contribution.js';
import { createHostMcpFactory } from '../../src/mcp/host-mcp.js';
import { createAcmpMcpContribution } from '../../src/mcp/provider-server.js';
import { MemoryTransactionStore } from '../../src/storage/memory/acp-transaction-store-memory.js';
import { RECEIVER_AGENT_ID } from '../helpers/acp-builders.js';
import { acpMcpHost } from './acp-helpers.js';
import { ALICE } from './helpers.js';

/**
 * What the host's MCP server costs per HTTP request (docs/performance.md "MCP: the binding's own cost"):
 * the SDK builds a fresh server for every request, so whatever a contribution builds in `register`, or
 * whatever the factory registers that the request cannot reach, is paid on every call.
 */

function contributions(): McpContribution[] {
  const provider = createAcmpProvider({ capabilities: demoCapabilities() });
  const store = new MemoryTransactionStore();
  const receiver = createAcpReceiver({
    store,
    accepts: ['snapshot', 'delta'],
    receiverAgentId: RECEIVER_AGENT_ID,
    producer: { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' },
  });
  return [
    createAcmpMcpContribution({ provider }),
    createAcpMcpContribution({
      receiver,
      commits: store,
      accepts: ['snapshot', 'delta'],
      emits: ['snapshot', 'delta'],
      secure: true,
      baseUrl: () => 'https://dealer.example',
    }),
  ];
}

/** What one contribution registers on a fresh server: the methods of its handlers and its schemas. */
function registered(contribution: McpContribution, call: McpCall): { methods: string[]; schemas: unknown[] } {
  const mcp = new McpServer(
    { name: 'probe', version: '0' },
    { capabilities: contribution.capabilities({ era: call.era, transport: call.transport }) },
  );
  const methods: string[] = [];
  const schemas: unknown[] = [];
  const server = mcp.server;
  const setRequest = server.setRequestHandler.bind(server);
  const setNotification = server.setNotificationHandler.bind(server);
  server.setRequestHandler = (method: string, ...rest: unknown[]) => {
    methods.push(method);
    return (setRequest as (...a: unknown[]) => unknown)(method, ...rest);
  };
  server.setNotificationHandler = (method: string, ...rest: unknown[]) => {
    methods.push(method);
    return (setNotification as (...a: unknown[]) => unknown)(method, ...rest);
  };
  const registerTool = mcp.registerTool.bind(mcp);
  mcp.registerTool = ((name: string, config: { inputSchema?: unknown }, cb: unknown) => {
    schemas.push(config.inputSchema);
    return (registerTool as (...a: unknown[]) => unknown)(name, config, cb);
  }) as typeof mcp.registerTool;
  const registerPrompt = mcp.registerPrompt.bind(mcp);
  mcp.registerPrompt = ((name: string, config: { argsSchema?: unknown }, cb: unknown) => {
    schemas.push(config.argsSchema);
    return (registerPrompt as (...a: unknown[]) => unknown)(name, config, cb);
  }) as typeof mcp.registerPrompt;
  contribution.register(mcp, call);
  return { methods, schemas };
}

const CALLS: McpCall[] = [
  { caller: 'agent:alice', era: 'modern', transport: 'http' },
  { caller: 'agent:alice', era: 'legacy', transport: 'http' },
  { caller: 'agent:alice', era: 'modern', transport: 'stdio' },
];

describe('the per-request MCP server', () => {
  it.each(CALLS)('serves every method its contributions register ($era over $transport)', (call) => {
    for (const contribution of contributions()) {
      const { methods } = registered(contribution, call);
      expect(methods.length).toBeGreaterThan(0);
      // The factory skips a contribution for a method it says it does not serve: it must serve all it registers.
      expect(methods.filter((m) => contribution.serves?.(m) === false)).toEqual([]);
    }
  });

  it("builds the ACPspec tools' and prompt's schemas once, not for every instance", () => {
    const [, acp] = contributions();
    const first = registered(acp!, CALLS[0]!).schemas;
    const second = registered(acp!, CALLS[0]!).schemas;
    expect(first.length).toBe(6);
    for (const [i, schema] of first.entries()) expect(second[i]).toBe(schema);
  });

  it('registers, for a modern request naming its method, only the contributions that serve it', () => {
    const seen: string[][] = [];
    const recording = contributions().map((c, i) => ({
      ...c,
      capabilities: c.capabilities.bind(c),
      instructions: c.instructions,
      serves: c.serves?.bind(c),
      register: (mcp: McpServer, call: McpCall) => {
        seen.at(-1)!.push(i === 0 ? 'acmp' : 'acp');
        c.register(mcp, call);
      },
    }));
    const factory = createHostMcpFactory({
      contributions: { all: recording },
      transport: 'http',
      callerOf: () => 'agent:alice',
    });
    const build = (era: 'modern' | 'legacy', method?: string): string[] => {
      seen.push([]);
      const headers = method === undefined ? undefined : { 'mcp-method': ` ${method} ` };
      void factory({ era, requestInfo: new Request('http://127.0.0.1/mcp', { method: 'POST', headers }) });
      return seen.at(-1)!;
    };
    expect(build('modern', 'acmp/invoke')).toEqual(['acmp']);
    expect(build('modern', 'tools/call')).toEqual(['acp']);
    expect(build('modern', 'server/discover')).toEqual([]);
    // Without a known method (2025 era; a request without the header never reaches the factory) all serve.
    expect(build('legacy', 'acmp/invoke')).toEqual(['acmp', 'acp']);
    expect(build('modern')).toEqual(['acmp', 'acp']);
  });

  it('answers a JSON result with its length in one piece, not chunk-encoded', async () => {
    const host = await acpMcpHost({ 'no-tls': true, 'no-personal-data': true });
    const res = await fetch(`${host.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ALICE}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'server/discover',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'server/discover',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('transfer-encoding')).toBeNull();
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    const body = JSON.parse(text) as { id: number; result: { capabilities: { extensions: object } } };
    expect(body.id).toBe(7);
    // The capabilities of both contributions, though the instance registered neither's handlers.
    expect(Object.keys(body.result.capabilities.extensions).sort()).toEqual([
      'org.a2agora/acmp',
      'org.acpspec/mcp',
    ]);
  });
});

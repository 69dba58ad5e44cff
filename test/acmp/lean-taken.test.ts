import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SendMessageRequest } from '@a2a-js/sdk';
import { CommerceRequestHandler } from '../../src/a2a/host/request-handler.js';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { ACP_EXTENSION_URI, ACP_MEDIA_TYPE } from '../../src/acpspec/constants.js';
import { startTestHost } from '../helpers/host.js';
import { sdkMessage } from '../helpers/transports.js';

/**
 * The lean invoke path is really taken (docs/acmp-a2a-binding.md "The lean invoke path"): an ACMP send
 * with the extension requested reaches the host's request handler from the lean core
 * (src/a2a/host/lean-invoke.ts), with no frame of the SDK's Express transports on the stack; with the lean
 * path off (and for what it does not serve) the same request reaches it from the SDK's transport. The
 * golden test (test/acmp/lean-golden.test.ts) shows the two answer alike; this one shows they are two.
 */

const SDK_TRANSPORTS = '@a2a-js/sdk/dist/server/express/';
const LEAN_CORE = 'src/a2a/host/lean-invoke.ts';

/** The call stacks the request handler's sends were made from, in order. */
const callers: string[] = [];

function recordCallers(): void {
  const prototype = CommerceRequestHandler.prototype;
  for (const method of ['sendMessage', 'sendMessageStream'] as const) {
    const original: unknown = Reflect.get(prototype, method);
    if (typeof original !== 'function') throw new Error(`no ${method}`);
    vi.spyOn(prototype, method).mockImplementation(function (this: CommerceRequestHandler, ...args) {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 50;
      callers.push(new Error('caller').stack ?? '');
      Error.stackTraceLimit = limit;
      return Reflect.apply(original, this, args) as never;
    });
  }
}

let seq = 0;
type Binding = 'ACMP' | 'ACPspec';

/** One part the binding claims: an ACMP invoke, or an ACPspec state request. */
function partOf(binding: Binding): { data: unknown; media_type: string } {
  if (binding === 'ACPspec')
    return { data: { acp_state_request: { transaction_id: `tx-taken-${seq}` } }, media_type: ACP_MEDIA_TYPE };
  const root = {
    acmp_method: 'acmp/invoke',
    params: {
      task_id: `taken-${seq}`,
      capability: 'echo',
      input: { type: 'text', data: 'hi' },
      max_price_cu: 0.01,
    },
  };
  return { data: root, media_type: 'application/acmp+json' };
}

function sendBody(binding: Binding): unknown {
  ++seq;
  const message = sdkMessage({ message_id: `m-taken-${seq}`, role: 'user', parts: [partOf(binding)] });
  return SendMessageRequest.toJSON({ tenant: '', message, configuration: undefined, metadata: undefined });
}

type Kind = 'send' | 'stream';
type Transport = 'JSON-RPC' | 'HTTP+JSON' | 'HTTP+JSON with a tenant';

/** Sends one send of a binding's message over a transport and reads the whole answer. */
async function send(
  base: string,
  transport: Transport,
  kind: Kind,
  binding: Binding = 'ACMP',
): Promise<number> {
  const params = sendBody(binding);
  const [path, body] =
    transport === 'JSON-RPC'
      ? [
          '/a2a/jsonrpc',
          {
            jsonrpc: '2.0',
            id: seq,
            method: kind === 'send' ? 'SendMessage' : 'SendStreamingMessage',
            params,
          },
        ]
      : [`/a2a/rest${transport === 'HTTP+JSON' ? '' : '/t1'}/message:${kind}`, params];
  const response = await fetch(base + path, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'A2A-Version': '1.0',
      'A2A-Extensions': binding === 'ACMP' ? ACMP_EXTENSION_URI : ACP_EXTENSION_URI,
      Accept: kind === 'send' ? 'application/json' : 'text/event-stream',
    },
    body: JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

async function host(leanInvoke: boolean): Promise<string> {
  const capabilities = [
    {
      id: 'echo',
      price: 0.001,
      handler: () => Promise.resolve({ type: 'json' as const, data: { ok: true } }),
    },
  ];
  const acp = acpModule({
    producer: { agent_id: 'https://dealer.example/agents/acp', role: 'dealer_agent' },
  });
  const modules = [acmpModule({ capabilities }), acp];
  return (await startTestHost({ modules, leanInvoke, flags: { 'no-personal-data': true } })).url;
}

describe('the lean invoke path is taken (docs/acmp-a2a-binding.md "The lean invoke path")', () => {
  let lean: string;
  let sdk: string;
  beforeAll(async () => {
    [lean, sdk] = await Promise.all([host(true), host(false)]);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    callers.splice(0);
  });

  const cases: [Transport, Kind][] = [
    ['JSON-RPC', 'send'],
    ['JSON-RPC', 'stream'],
    ['HTTP+JSON', 'send'],
    ['HTTP+JSON', 'stream'],
  ];

  it.each(cases)('%s %s: reaches the handler from the lean core, not the SDK', async (transport, kind) => {
    recordCallers();
    expect(await send(lean, transport, kind)).toBe(200);
    expect(callers).toHaveLength(1);
    expect(callers[0]).toContain(LEAN_CORE);
    expect(callers[0]).not.toContain(SDK_TRANSPORTS);
  });

  it.each(cases)('%s %s with the lean path off: reaches it from the SDK', async (transport, kind) => {
    recordCallers();
    expect(await send(sdk, transport, kind)).toBe(200);
    expect(callers).toHaveLength(1);
    expect(callers[0]).toContain(SDK_TRANSPORTS);
    expect(callers[0]).not.toContain(LEAN_CORE);
  });

  it.each(cases)(
    'ACPspec over %s, %s: reaches the handler from the lean core too',
    async (transport, kind) => {
      recordCallers();
      expect(await send(lean, transport, kind, 'ACPspec')).toBe(200);
      expect(callers).toHaveLength(1);
      expect(callers[0]).toContain(LEAN_CORE);
      expect(callers[0]).not.toContain(SDK_TRANSPORTS);
    },
  );

  it.each(['send', 'stream'] as const)('HTTP+JSON %s under a tenant stays on the SDK', async (kind) => {
    recordCallers();
    expect(await send(lean, 'HTTP+JSON with a tenant', kind)).toBe(200);
    expect(callers).toHaveLength(1);
    expect(callers[0]).toContain(SDK_TRANSPORTS);
  });
});

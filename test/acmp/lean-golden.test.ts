import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentCard, type Message, type SendMessageRequest } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { AcmpError, ACMP_CODE } from '../../src/acmp/wire/errors.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import type { IdSource } from '../../src/shared/ids.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { startTestHost } from '../helpers/host.js';
import { sdkMessage } from '../helpers/transports.js';

/**
 * The lean invoke path (src/a2a/host/lean-invoke.ts) is byte-compatible with the SDK's, on JSON-RPC and
 * HTTP+JSON: the SDK's real client, with either transport, sends each request once; a mirroring fetch
 * sends the very same bytes to a host with the lean path on and to one with it off, and compares status,
 * every header but the date, and the body.
 * Normalised, because inherently per run: `timestamp` values (each host's wall clock). Ids are not
 * normalised: both hosts draw them from the same deterministic sequence.
 */

/** Ids `<prefix>_<n>` from a counter: two hosts fed the same requests draw the same ids. */
function countingIds(): IdSource {
  let n = 0;
  return { newId: (prefix = 'id') => `${prefix}_${String(++n).padStart(6, '0')}` };
}

/** Waits until aborted, then fails with the abort reason (for cancels). */
const waitForCancel = (signal: AbortSignal): Promise<never> =>
  new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));

function capabilities(): AcmpCapability[] {
  return [
    {
      id: 'echo',
      price: 0.001,
      handler: (input) => Promise.resolve({ type: 'json', data: { echo: input.data } }),
    },
    {
      id: 'fails-coded',
      price: 0,
      handler: () => Promise.reject(new AcmpError(ACMP_CODE.invalidParams, { detail: 'no such row' })),
    },
    { id: 'fails-plain', price: 0, handler: () => Promise.reject(new Error('SELECT * FROM secrets')) },
    { id: 'waits', price: 0, handler: (_input, ctx) => waitForCancel(ctx.signal) },
    {
      id: 'chunks',
      price: 0,
      // eslint-disable-next-line @typescript-eslint/require-await -- the handler contract is an AsyncIterable
      async *handler(_input, ctx) {
        for (let i = 0; i < 3; i++) {
          ctx.heartbeat(i / 3, `step ${i}`);
          yield { type: 'text', data: `chunk ${i}` };
        }
      },
    },
  ];
}

async function host(leanInvoke: boolean): Promise<{ url: string }> {
  const module = acmpModule({
    capabilities: capabilities(),
    heartbeatIntervalMs: 1000,
    outputStreaming: true,
  });
  return startTestHost({ modules: [module], leanInvoke, ids: countingIds() });
}

interface Exchange {
  readonly request: string;
  readonly lean: string;
  readonly sdk: string;
}

/** Headers that differ between any two responses of one server: the clock's. */
const PER_RESPONSE = new Set(['date']);

/** What is compared of one response: status, every header but the date, and the body. */
async function view(response: Response): Promise<string> {
  const headers = [...response.headers]
    .filter(([name]) => !PER_RESPONSE.has(name))
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
  const body = (await response.text()).replace(/"timestamp":"[^"]*"/g, '"timestamp":"<T>"');
  return `${response.status}\n${headers}\n\n${body}`;
}

/** A fetch that sends every request to both hosts and hands the lean host's answer to the client. */
function mirror(lean: string, sdk: string, log: Exchange[]): typeof fetch {
  return async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const headers = new Headers(init?.headers);
    const body = typeof init?.body === 'string' ? init.body : undefined;
    const send = (base: string): Promise<Response> =>
      fetch(url.replace(lean, base), { method: init?.method ?? 'GET', headers, ...(body ? { body } : {}) });
    const fromLean = await send(lean);
    const leanView = await view(fromLean.clone());
    const sdkView = await view(await send(sdk));
    log.push({ request: body ?? url, lean: leanView, sdk: sdkView });
    return new Response(await fromLean.arrayBuffer(), { status: fromLean.status, headers: fromLean.headers });
  };
}

type Binding = 'JSONRPC' | 'HTTP+JSON';

async function clientFor(
  urls: { lean: string; sdk: string },
  wire: { binding: Binding; version: '1.0' | '0.3' },
  log: Exchange[],
): Promise<Client> {
  const { binding, version } = wire;
  const response = await fetch(`${urls.lean}/.well-known/agent-card.json`, {
    headers: { 'A2A-Version': '1.0' },
  });
  const card = AgentCard.fromJSON(await response.json());
  const interfaces = card.supportedInterfaces.filter(
    (i) => i.protocolBinding === binding && i.protocolVersion.startsWith('0.') === (version === '0.3'),
  );
  const options = { fetchImpl: mirror(urls.lean, urls.sdk, log), legacyCompat: { enabled: true } };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        binding === 'JSONRPC' ? new JsonRpcTransportFactory(options) : new RestTransportFactory(options),
      ],
    }),
  );
  return factory.createFromAgentCard({ ...card, supportedInterfaces: interfaces });
}

const ACTIVATED = { serviceParameters: { 'A2A-Extensions': ACMP_EXTENSION_URI } };
let seq = 0;

/** A send request carrying one ACMP root (seed spelling, through the SDK's message type). */
function acmpSend(
  root: Record<string, unknown>,
  extra: Partial<SendMessageRequest> = {},
): SendMessageRequest {
  const params = root.params as { task_id?: string };
  const message: Message = sdkMessage({
    message_id: `m-${++seq}`,
    role: 'user',
    ...(params.task_id ? { task_id: params.task_id } : {}),
    parts: [{ data: root, media_type: 'application/acmp+json' }],
  });
  return { tenant: '', message, configuration: undefined, metadata: undefined, ...extra };
}

const invoke = (taskId: string, params: Record<string, unknown> = {}): Record<string, unknown> => ({
  acmp_method: 'acmp/invoke',
  params: {
    task_id: taskId,
    capability: 'echo',
    input: { type: 'text', data: 'hi' },
    max_price_cu: 0.01,
    ...params,
  },
});

/** A send configuration with an inline push webhook (the host allows none: refused by its handler). */
const hooked = (): NonNullable<SendMessageRequest['configuration']> => ({
  acceptedOutputModes: [],
  historyLength: undefined,
  returnImmediately: false,
  taskPushNotificationConfig: {
    tenant: '',
    id: '',
    taskId: '',
    url: 'https://hooks.example/acmp',
    token: '',
    authentication: undefined,
  },
});

/** Runs a call and swallows what the client throws: the exchange log is what is compared. */
async function settle(work: Promise<unknown> | AsyncGenerator<unknown>): Promise<void> {
  try {
    if (Symbol.asyncIterator in work) for await (const _ of work);
    else await work;
  } catch {
    // An error answer is part of the comparison, not a failure of the test.
  }
}

const WIRES: readonly [Binding, '1.0' | '0.3'][] = [
  ['JSONRPC', '1.0'],
  ['JSONRPC', '0.3'],
  ['HTTP+JSON', '1.0'],
  ['HTTP+JSON', '0.3'],
];

describe.each(WIRES)('lean invoke path vs the SDK path, %s A2A %s, byte for byte', (binding, version) => {
  const log: Exchange[] = [];
  let client: Client;
  const id = (name: string): string => `golden-${binding}-${version}-${name}`;

  beforeAll(async () => {
    const [lean, sdk] = await Promise.all([host(true), host(false)]);
    client = await clientFor({ lean: lean.url, sdk: sdk.url }, { binding, version }, log);
  });
  afterAll(() => void log.splice(0));

  const cases: [string, () => Promise<void>][] = [
    ['a result', () => settle(client.sendMessage(acmpSend(invoke(id('result'))), ACTIVATED))],
    ['a replayed duplicate', () => settle(client.sendMessage(acmpSend(invoke(id('result'))), ACTIVATED))],
    [
      'a reused task_id with other params',
      () =>
        settle(
          client.sendMessage(
            acmpSend(invoke(id('result'), { input: { type: 'text', data: 'other' } })),
            ACTIVATED,
          ),
        ),
    ],
    [
      'a coded handler error',
      () =>
        settle(client.sendMessage(acmpSend(invoke(id('coded'), { capability: 'fails-coded' })), ACTIVATED)),
    ],
    [
      'an internal handler error',
      () =>
        settle(client.sendMessage(acmpSend(invoke(id('plain'), { capability: 'fails-plain' })), ACTIVATED)),
    ],
    [
      'an unknown capability (refused before claim)',
      () => settle(client.sendMessage(acmpSend(invoke(id('unknown'), { capability: 'nope' })), ACTIVATED)),
    ],
    [
      'a price above max_price_cu',
      () => settle(client.sendMessage(acmpSend(invoke(id('price'), { max_price_cu: 0.0001 })), ACTIVATED)),
    ],
    [
      'invalid params',
      () => settle(client.sendMessage(acmpSend(invoke(id('bad'), { input: 'not a payload' })), ACTIVATED)),
    ],
    ['the extension not activated', () => settle(client.sendMessage(acmpSend(invoke(id('noext')))))],
    [
      'a stream of chunks and heartbeats',
      () =>
        settle(
          client.sendMessageStream(
            acmpSend(invoke(id('stream'), { capability: 'chunks', stream: true })),
            ACTIVATED,
          ),
        ),
    ],
    [
      'a replayed stream',
      () =>
        settle(
          client.sendMessageStream(
            acmpSend(invoke(id('stream'), { capability: 'chunks', stream: true })),
            ACTIVATED,
          ),
        ),
    ],
    [
      'an inline webhook the host does not allow (a refusal of the call)',
      () => settle(client.sendMessage(acmpSend(invoke(id('hook')), { configuration: hooked() }), ACTIVATED)),
    ],
    [
      'a stream with an inline webhook the host does not allow',
      () =>
        settle(
          client.sendMessageStream(
            acmpSend(invoke(id('shook'), { capability: 'chunks', stream: true }), {
              configuration: hooked(),
            }),
            ACTIVATED,
          ),
        ),
    ],
    [
      'a stream refused before claim',
      () =>
        settle(
          client.sendMessageStream(
            acmpSend(invoke(id('sprice'), { max_price_cu: 0.0001, stream: true })),
            ACTIVATED,
          ),
        ),
    ],
    [
      'returnImmediately, then A2A CancelTask and GetTask',
      async () => {
        const send = acmpSend(invoke(id('cancel'), { capability: 'waits' }), {
          configuration: {
            acceptedOutputModes: [],
            historyLength: undefined,
            returnImmediately: true,
            taskPushNotificationConfig: undefined,
          },
        });
        await settle(client.sendMessage(send, ACTIVATED));
        await settle(client.cancelTask({ id: id('cancel'), tenant: '', metadata: undefined }, ACTIVATED));
        await settle(client.getTask({ id: id('cancel'), tenant: '', historyLength: undefined }, ACTIVATED));
      },
    ],
    [
      'an in-band acmp/cancel',
      async () => {
        const send = acmpSend(invoke(id('inband'), { capability: 'waits' }), {
          configuration: {
            acceptedOutputModes: [],
            historyLength: undefined,
            returnImmediately: true,
            taskPushNotificationConfig: undefined,
          },
        });
        await settle(client.sendMessage(send, ACTIVATED));
        await settle(
          client.sendMessage(
            acmpSend({ acmp_method: 'acmp/cancel', params: { task_id: id('inband'), reason: 'r' } }),
            ACTIVATED,
          ),
        );
      },
    ],
  ];

  it.each(cases)('answers %s identically', async (_name, run) => {
    const from = log.length;
    await run();
    const exchanges = log.slice(from);
    expect(exchanges.length).toBeGreaterThan(0);
    for (const exchange of exchanges) expect(exchange.lean, exchange.request).toBe(exchange.sdk);
  });
});

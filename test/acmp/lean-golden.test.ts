import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message, SendMessageRequest } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { AcmpError, ACMP_CODE } from '../../src/acmp/wire/errors.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { startTestHost } from '../helpers/host.js';
import { clientFor, countingIds, exchangesOf, settle, WIRES, type Exchange } from '../helpers/lean-golden.js';
import { sdkMessage } from '../helpers/transports.js';

/**
 * The lean invoke path (src/a2a/host/lean-invoke.ts) is byte-compatible with the SDK's, on JSON-RPC and
 * HTTP+JSON, for every ACMP outcome (the harness: test/helpers/lean-golden.ts).
 */

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

/** Send options that return at once, the task still running. */
const RETURN_AT_ONCE: Partial<SendMessageRequest> = {
  configuration: {
    acceptedOutputModes: [],
    historyLength: undefined,
    returnImmediately: true,
    taskPushNotificationConfig: undefined,
  },
};

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
        const send = acmpSend(invoke(id('cancel'), { capability: 'waits' }), RETURN_AT_ONCE);
        await settle(client.sendMessage(send, ACTIVATED));
        await settle(client.cancelTask({ id: id('cancel'), tenant: '', metadata: undefined }, ACTIVATED));
        await settle(client.getTask({ id: id('cancel'), tenant: '', historyLength: undefined }, ACTIVATED));
      },
    ],
    [
      'an in-band acmp/cancel',
      async () => {
        const send = acmpSend(invoke(id('inband'), { capability: 'waits' }), RETURN_AT_ONCE);
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
    for (const exchange of await exchangesOf(log, run))
      expect(exchange.lean, exchange.request).toBe(exchange.sdk);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { SendMessageRequest, type StreamResponse } from '@a2a-js/sdk';
import {
  InvalidAgentResponseError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ABinding } from '../../src/a2a/binding.js';
import { encodeAgentMessage, encodeTextPart, type InboundMessage } from '../../src/a2a/part-codec.js';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import type { HostModule } from '../../src/server/module.js';
import { startTestHost } from '../helpers/host.js';
import { sdkMessage } from '../helpers/transports.js';

/**
 * The lean invoke path's error writers (src/a2a/host/lean-jsonrpc.ts, src/a2a/host/lean-rest.ts) against
 * the SDK's transports, for the failures the ACMP binding itself answers in band and so never shows the
 * golden test (test/acmp/lean-golden.test.ts): a send that fails with a coded or an internal error, a
 * stream refused when it is called, by its first event, or failing after it. A stand-in for the ACMP
 * binding (its id and extension, so the host routes to the lean path) fails as each message asks; the same
 * bytes go to a host with the lean path and one without, and status, headers but the date, and body must
 * match. Each call's stack shows which path reached the binding.
 */

const SEND_FAILURES = ['coded', 'precondition', 'bad-response', 'internal'] as const;
const STREAM_FAILURES = ['call', 'first', 'first-internal', 'mid', 'mid-internal'] as const;
type Failure = (typeof SEND_FAILURES)[number] | (typeof STREAM_FAILURES)[number];

const LEAN_CORE = 'src/a2a/host/lean-invoke.ts';

function failureOf(message: InboundMessage): Failure {
  const first = message.parts[0];
  const data = first?.kind === 'data' && typeof first.data === 'object' ? first.data : null;
  const failure: unknown = data && 'lean_probe' in data ? data.lean_probe : undefined;
  const known = [...SEND_FAILURES, ...STREAM_FAILURES].find((f) => f === failure);
  if (known === undefined) throw new Error('not a probe');
  return known;
}

function errorFor(failure: Failure): Error {
  if (failure === 'coded' || failure === 'call') return new TaskNotFoundError('Task not found: t-1');
  if (failure === 'precondition') return new UnsupportedOperationError('not here');
  // A coded error with a 5xx status: the SDK path's scope sends it without its details.
  if (failure === 'bad-response') return new InvalidAgentResponseError('bad');
  if (failure === 'first' || failure === 'mid') return new TaskNotCancelableError('no');
  return new Error('SELECT * FROM secrets');
}

/** A stand-in for the ACMP binding that fails as the message's `lean_probe` says. */
function failingModule(stacks: string[]): HostModule {
  const note = (): void => void stacks.push(new Error('caller').stack ?? '');
  const event: StreamResponse = {
    payload: {
      $case: 'message',
      value: encodeAgentMessage({ messageId: 'a-1', parts: [encodeTextPart('one')] }),
    },
  };
  const binding: A2ABinding = {
    id: 'acmp',
    extension: { uri: ACMP_EXTENSION_URI, description: 'stand-in', required: false, params: {} },
    skills: [],
    claims: (message) => message.parts[0]?.kind === 'data',
    sendMessage(call) {
      note();
      return Promise.reject(errorFor(failureOf(call.message)));
    },
    sendMessageStream(call) {
      note();
      const failure = failureOf(call.message);
      if (failure === 'call') throw errorFor(failure);
      return (async function* () {
        await Promise.resolve();
        if (failure === 'mid' || failure === 'mid-internal') yield event;
        throw errorFor(failure);
      })();
    },
  };
  return { name: 'stand-in', start: () => ({ binding }) };
}

function body(failure: Failure): unknown {
  const message = sdkMessage({
    message_id: `m-${failure}`,
    role: 'user',
    parts: [{ data: { lean_probe: failure }, media_type: 'application/json' }],
  });
  return SendMessageRequest.toJSON({ tenant: '', message, configuration: undefined, metadata: undefined });
}

/** Status, every header but the date, and the body of one exchange. */
async function exchange(
  base: string,
  transport: 'JSON-RPC' | 'HTTP+JSON',
  failure: Failure,
  stream: boolean,
) {
  const params = body(failure);
  const [path, sent] =
    transport === 'JSON-RPC'
      ? [
          '/a2a/jsonrpc',
          { jsonrpc: '2.0', id: 7, method: stream ? 'SendStreamingMessage' : 'SendMessage', params },
        ]
      : [`/a2a/rest/message:${stream ? 'stream' : 'send'}`, params];
  const response = await fetch(base + path, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'A2A-Version': '1.0',
      'A2A-Extensions': ACMP_EXTENSION_URI,
      Accept: stream ? 'text/event-stream' : 'application/json',
    },
    body: JSON.stringify(sent),
  });
  const headers = [...response.headers].filter(([name]) => name !== 'date').map(([n, v]) => `${n}: ${v}`);
  return `${response.status}\n${headers.join('\n')}\n\n${await response.text()}`;
}

describe('the lean path writes failures as the SDK transports do (binding §11)', () => {
  const stacks = { lean: [] as string[], sdk: [] as string[] };
  const urls = { lean: '', sdk: '' };
  beforeAll(async () => {
    const [lean, sdk] = await Promise.all([
      startTestHost({ modules: [failingModule(stacks.lean)], leanInvoke: true }),
      startTestHost({ modules: [failingModule(stacks.sdk)], leanInvoke: false }),
    ]);
    urls.lean = lean.url;
    urls.sdk = sdk.url;
  });

  const cases: ['JSON-RPC' | 'HTTP+JSON', Failure, boolean][] = [];
  for (const transport of ['JSON-RPC', 'HTTP+JSON'] as const) {
    for (const failure of SEND_FAILURES) cases.push([transport, failure, false]);
    for (const failure of STREAM_FAILURES) cases.push([transport, failure, true]);
  }

  it.each(cases)('%s, %s (stream: %s)', async (transport, failure, stream) => {
    const from = { lean: stacks.lean.length, sdk: stacks.sdk.length };
    const lean = await exchange(urls.lean, transport, failure, stream);
    const sdk = await exchange(urls.sdk, transport, failure, stream);
    expect(lean).toBe(sdk);
    expect(stacks.lean.slice(from.lean).every((s) => s.includes(LEAN_CORE))).toBe(true);
    expect(stacks.lean.length).toBeGreaterThan(from.lean);
    expect(stacks.sdk.slice(from.sdk).some((s) => s.includes(LEAN_CORE))).toBe(false);
  });
});

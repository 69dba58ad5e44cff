import { AgentCard } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import type { IdSource } from '../../src/shared/ids.js';

/**
 * The harness of the lean path's golden tests (test/acmp/lean-golden.test.ts, test/acpspec/lean-golden.test.ts):
 * the SDK's real client, with either HTTP transport, sends each request once; a mirroring fetch sends the
 * very same bytes to a host with the lean path on and to one with it off, and records status, every header
 * but the date, and the body of both answers.
 * Normalised, because inherently per run: `timestamp` values (each host's wall clock). Ids are not
 * normalised: both hosts draw them from the same deterministic sequence.
 */

/** Ids `<prefix>_<n>` from a counter: two hosts fed the same requests draw the same ids. */
export function countingIds(): IdSource {
  let n = 0;
  return { newId: (prefix = 'id') => `${prefix}_${String(++n).padStart(6, '0')}` };
}

export interface Exchange {
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

export type Binding = 'JSONRPC' | 'HTTP+JSON';

export async function clientFor(
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

/** Runs a call and swallows what the client throws: the exchange log is what is compared. */
export async function settle(work: Promise<unknown> | AsyncGenerator<unknown>): Promise<void> {
  try {
    if (Symbol.asyncIterator in work) for await (const _ of work);
    else await work;
  } catch {
    // An error answer is part of the comparison, not a failure of the test.
  }
}

export const WIRES: readonly [Binding, '1.0' | '0.3'][] = [
  ['JSONRPC', '1.0'],
  ['JSONRPC', '0.3'],
  ['HTTP+JSON', '1.0'],
  ['HTTP+JSON', '0.3'],
];

/** Runs one case and returns the exchanges it made (at least one, or the case compared nothing). */
export async function exchangesOf(log: readonly Exchange[], run: () => Promise<void>): Promise<Exchange[]> {
  const from = log.length;
  await run();
  const exchanges = log.slice(from);
  if (exchanges.length === 0) throw new Error('the case sent no request to compare');
  return exchanges;
}

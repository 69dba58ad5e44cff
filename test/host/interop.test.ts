import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { A2A_PATHS } from '../../src/a2a/host/agent-card.js';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { resolveHostConfig } from '../../src/server/config.js';
import { selectModules } from '../../src/cli/host-modules.js';
import { acmpMessage, invokeRoot, rpc, V1 } from '../acmp/helpers.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { sdkMessage } from '../helpers/transports.js';

afterEach(cleanup);

// One ACMP host over every transport; each test sends fresh task ids.
const theHost = shared(() =>
  startTestHost({
    flags: { 'grpc-port': '0' },
    modules: selectModules(resolveHostConfig({}, {}), { modules: ['acmp'] }),
  }),
);

const A2A_JSON = 'application/a2a+json';
const LEGACY_ACTIVATED = { ...V1, 'X-A2A-Extensions': ACMP_EXTENSION_URI };

async function post(path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(theHost().url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { res, body: (await res.json()) as Record<string, unknown> };
}

const plainMessage = () => ({ messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] });

describe('the v0.3 X-A2A-Extensions header is accepted beside A2A-Extensions (docs/host.md "Interop")', () => {
  it('activates ACMP on a v1.0 JSON-RPC request', async () => {
    const { res, body } = await post(
      A2A_PATHS.jsonRpc,
      rpc('SendMessage', { message: acmpMessage(invokeRoot()) }),
      LEGACY_ACTIVATED,
    );
    expect(body.error).toBeUndefined();
    expect(res.headers.get('a2a-extensions')).toBe(ACMP_EXTENSION_URI);
  });

  it('activates ACMP on a v1.0 REST request', async () => {
    const { res, body } = await post(
      `${A2A_PATHS.rest}/message:send`,
      { message: acmpMessage(invokeRoot()) },
      LEGACY_ACTIVATED,
    );
    expect([res.status, body.error]).toEqual([200, undefined]);
    expect(res.headers.get('a2a-extensions')).toBe(ACMP_EXTENSION_URI);
  });

  it('activates ACMP as gRPC metadata (x-a2a-extensions)', async () => {
    // A raw grpc-js client: the SDK's own client rewrites the header name to the version's spelling.
    const RawA2A = grpc.makeGenericClientConstructor(A2AService, 'A2AService');
    const client = new RawA2A(theHost().grpcUrl!, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set('a2a-version', '1.0');
    metadata.set('x-a2a-extensions', ACMP_EXTENSION_URI);
    const request = { tenant: '', message: sdkMessage(acmpMessage(invokeRoot())), configuration: undefined };
    type Unary = (
      r: unknown,
      m: grpc.Metadata,
      cb: (error: grpc.ServiceError | null, response: unknown) => void,
    ) => void;
    const send = (client as unknown as Record<string, Unary>).sendMessage!.bind(client);
    const answer = await new Promise<{ error: grpc.ServiceError | null; response: unknown }>((resolve) =>
      send(request, metadata, (error, response) => resolve({ error, response })),
    );
    client.close();
    expect(answer.error?.details).toBeUndefined();
    expect(answer.response).toBeDefined();
  });

  it('joins both headers when a client sends both', async () => {
    const other = 'https://unknown.test/ext';
    const { res } = await post(A2A_PATHS.jsonRpc, rpc('SendMessage', { message: plainMessage() }), {
      ...V1,
      'A2A-Extensions': other,
      'X-A2A-Extensions': ACMP_EXTENSION_URI,
    });
    expect(res.headers.get('a2a-extensions')).toBe(ACMP_EXTENSION_URI);
  });
});

describe('application/a2a+json (A2A v1.0.1 §11.1, §14.1.1)', () => {
  it('is accepted on a JSON-RPC request, answered as application/json (§9.1)', async () => {
    const { res, body } = await post(A2A_PATHS.jsonRpc, rpc('SendMessage', { message: plainMessage() }), {
      ...V1,
      'content-type': `${A2A_JSON}; charset=utf-8`,
    });
    expect(body.error).toBeUndefined();
    expect(body.result).toBeDefined();
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('answers a REST request sent as application/a2a+json in application/a2a+json', async () => {
    const { res, body } = await post(
      `${A2A_PATHS.rest}/message:send`,
      { message: plainMessage() },
      { ...V1, 'content-type': A2A_JSON },
    );
    expect(body.task).toBeDefined();
    expect(res.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
  });

  it('answers a REST request whose Accept prefers it in application/a2a+json, errors too', async () => {
    const headers = { ...V1, accept: A2A_JSON };
    const sent = await post(`${A2A_PATHS.rest}/message:send`, { message: plainMessage() }, headers);
    expect(sent.res.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
    const missing = await fetch(`${theHost().url}${A2A_PATHS.rest}/tasks/no-such-task`, { headers });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
  });

  it('answers a REST request that does not ask for it in application/json', async () => {
    const { res, body } = await post(`${A2A_PATHS.rest}/message:send`, { message: plainMessage() }, V1);
    expect(body.task).toBeDefined();
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const star = await fetch(`${theHost().url}${A2A_PATHS.rest}/tasks/no-such-task`, {
      headers: { ...V1, accept: '*/*' },
    });
    expect(star.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('leaves streams as text/event-stream', async () => {
    const res = await fetch(`${theHost().url}${A2A_PATHS.rest}/message:stream`, {
      method: 'POST',
      headers: { ...V1, 'content-type': A2A_JSON, accept: 'text/event-stream' },
      body: JSON.stringify({ message: plainMessage() }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await res.text();
  });
});

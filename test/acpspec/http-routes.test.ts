import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ACP_HTTP_PREFIX, ACP_HTTP_ROUTES, ACP_MEDIA_TYPE } from '../../src/acpspec/constants.js';
import type { AcpReceiver } from '../../src/acpspec/receiver.js';
import { mountAcpRoutes } from '../../src/http/acp-routes.js';
import type { HostModule } from '../../src/server/module.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { anonymousState } from '../helpers/acp-builders.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { freshSnapshot, postEnvelope, startAcpHost, txId } from './helpers.js';

afterEach(cleanup);

/** A promise with its resolver. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('POST /acp/v0.1/envelopes over the body limit (design "HTTPS binding")', () => {
  it('answers 413 ACP_PAYLOAD_TOO_LARGE as a canonical acp_error and keeps serving', async () => {
    const host = await startAcpHost();
    const big = Buffer.alloc(Math.round(1.1 * 1024 * 1024), 0x20);
    const refused = await postEnvelope(host, big);
    expect(refused.status).toBe(413);
    expect(refused.body).toEqual({
      acp_error: { code: 'ACP_PAYLOAD_TOO_LARGE', message: expect.any(String) as string, retryable: false },
    });
    expect(refused.raw.toString('utf8')).toBe(canonicalJson(refused.body));

    const envelope = freshSnapshot(txId('after-413'), anonymousState());
    const accepted = await postEnvelope(host, canonicalJson(envelope));
    expect(accepted.status).toBe(200);
  });

  it('answers a body that cannot be read (unsupported encoding) with a coded 400', async () => {
    const host = await startAcpHost();
    const res = await host.fetch(`${host.url}${ACP_HTTP_ROUTES.envelopes}`, {
      method: 'POST',
      headers: { 'content-type': ACP_MEDIA_TYPE, 'content-encoding': 'x-unknown' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { acp_error: { code: string } }).acp_error.code).toBe(
      'ACP_MESSAGE_NONCONFORMANT',
    );
  });
});

/** A receiver whose `events` waits for the test and whose `follow` records how it ends. */
function gatedReceiver() {
  const lookup = deferred();
  const release = deferred();
  const follows: AbortSignal[] = [];
  const receiver = {
    async events() {
      lookup.resolve();
      await release.promise;
      return { events: [] };
    },
    async *follow(_id: string, options: { signal: AbortSignal }) {
      follows.push(options.signal);
      if (!options.signal.aborted) await once(options.signal, 'abort');
      yield* [];
    },
  } as unknown as AcpReceiver;
  return { receiver, lookup, release, follows };
}

/** A host serving the ACPspec routes over `receiver`; `closed` resolves when an events response closes. */
async function routesHost(receiver: AcpReceiver, sseKeepaliveMs?: number) {
  const closed = deferred();
  const module: HostModule = {
    name: 'acp-routes-under-test',
    start: () => ({
      mountHttp(app, guards) {
        app.use(ACP_HTTP_PREFIX, (_req, res, next) => {
          res.on('close', () => closed.resolve());
          next();
        });
        mountAcpRoutes(app, {
          receiver,
          secure: false,
          auth: guards.auth,
          callerOf: guards.callerOf,
          bodyLimitBytes: guards.bodyLimitBytes,
          ...(sseKeepaliveMs === undefined ? {} : { sseKeepaliveMs }),
        });
      },
    }),
  };
  const host = await startTestHost({ modules: [module] });
  return { host, closed: closed.promise };
}

describe('GET …/events as Server-Sent Events: the follower ends with its client', () => {
  it('does not start following for a client that left while the transaction was looked up', async () => {
    const gate = gatedReceiver();
    const { host, closed } = await routesHost(gate.receiver);
    const client = new AbortController();
    const request = fetch(`${host.url}${ACP_HTTP_ROUTES.events('tx-gone')}`, {
      headers: { accept: 'text/event-stream' },
      signal: client.signal,
    }).catch(() => undefined);
    await gate.lookup.promise;
    client.abort();
    await request;
    await closed;
    gate.release.resolve();
    // Closing the host runs well after the handler resumed from the lookup (a microtask).
    await host.close();
    expect(gate.follows.every((signal) => signal.aborted)).toBe(true);
  });

  it('sends a keep-alive comment while the stream is quiet', async () => {
    const gate = gatedReceiver();
    gate.release.resolve();
    const { host } = await routesHost(gate.receiver, 20);
    const client = new AbortController();
    try {
      const res = await fetch(`${host.url}${ACP_HTTP_ROUTES.events('tx-quiet')}`, {
        headers: { accept: 'text/event-stream' },
        signal: client.signal,
      });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
      expect(text.startsWith(': keepalive\n\n')).toBe(true);
    } finally {
      client.abort();
    }
  });
});

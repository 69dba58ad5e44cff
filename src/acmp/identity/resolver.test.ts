import { describe, expect, it } from 'vitest';
import { createDidResolver, DEFAULT_DID_CACHE_TTL_MS } from './resolver.js';

const DID = 'did:web:agent.example%3A8443';
const URL_OF_DID = 'https://agent.example:8443/.well-known/did.json';

/** A fetch answering from `answer`, counting calls and recording the URLs asked for. */
function fakeFetch(answer: (url: string, init: RequestInit | undefined) => Promise<Response> | Response) {
  const urls: string[] = [];
  const impl = ((input: URL, init?: RequestInit) => {
    urls.push(input.href);
    return Promise.resolve(answer(input.href, init));
  }) as typeof fetch;
  return { impl, urls };
}

function documentResponse(doc: unknown = { id: DID }): Response {
  return new Response(JSON.stringify(doc), { headers: { 'content-type': 'application/did+json' } });
}

async function reason(work: Promise<unknown>): Promise<unknown> {
  const error = (await work.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: number; data: unknown } | undefined;
  return error && { code: error.code, data: error.data };
}

describe('DID resolution (Layer 7 §2.1)', () => {
  it('fetches a did:web document from its https URL, without following redirects', async () => {
    let redirect: RequestInit['redirect'];
    const fetched = fakeFetch((_url, init) => {
      redirect = init?.redirect;
      return documentResponse();
    });
    const resolver = createDidResolver({ fetch: fetched.impl });
    expect((await resolver.resolve(DID)).id).toBe(DID);
    expect(fetched.urls).toEqual([URL_OF_DID]);
    expect(redirect).toBe('error');
  });

  it('keeps a document for the cache TTL, then fetches it again', async () => {
    let now = 1_000_000;
    const fetched = fakeFetch(() => documentResponse());
    const resolver = createDidResolver({ fetch: fetched.impl, clock: { now: () => now } });
    await resolver.resolve(DID);
    now += DEFAULT_DID_CACHE_TTL_MS - 1;
    await resolver.resolve(DID);
    expect(fetched.urls).toHaveLength(1);
    now += 1;
    await resolver.resolve(DID);
    expect(fetched.urls).toHaveLength(2);
  });

  it('a refresh refetches, unless the cached copy is under a second old', async () => {
    let now = 0;
    const fetched = fakeFetch(() => documentResponse());
    const resolver = createDidResolver({ fetch: fetched.impl, clock: { now: () => now } });
    await resolver.resolve(DID);
    await resolver.resolve(DID, { refresh: true });
    expect(fetched.urls).toHaveLength(1);
    now += 1_000;
    await resolver.resolve(DID, { refresh: true });
    expect(fetched.urls).toHaveLength(2);
  });

  it('gives up at the deadline: -36002 timeout', async () => {
    const hanging = fakeFetch(
      (_url, init) =>
        new Promise<Response>((_resolve, reject) =>
          init?.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)),
        ),
    );
    const resolver = createDidResolver({ fetch: hanging.impl, timeoutMs: 50 });
    expect(await reason(resolver.resolve(DID))).toEqual({ code: -36002, data: { reason: 'timeout' } });
  });

  it('refuses what is not the document of that DID: -36002, and caches no failure', async () => {
    const answers = [
      new Response('missing', { status: 404 }),
      documentResponse({ id: 'did:web:other.example' }),
      documentResponse({ verificationMethod: 'x' }),
      new Response('{"id":', { status: 200 }),
      new Response(JSON.stringify({ id: DID, pad: 'x'.repeat(70_000) })),
    ];
    const fetched = fakeFetch(() => answers.shift() ?? documentResponse());
    const resolver = createDidResolver({ fetch: fetched.impl });
    const reasons = [];
    for (let i = 0; i < 5; i++) reasons.push(await reason(resolver.resolve(DID)));
    expect(reasons).toEqual([
      { code: -36002, data: { reason: 'notFound' } },
      { code: -36002, data: { reason: 'id_mismatch' } },
      { code: -36002, data: { reason: 'invalid_document' } },
      { code: -36002, data: { reason: 'notFound' } },
      { code: -36002, data: { reason: 'notFound' } },
    ]);
    expect((await resolver.resolve(DID)).id).toBe(DID);
  });

  it('refuses methods it does not resolve and malformed DIDs: -36002', async () => {
    const resolver = createDidResolver({ fetch: fakeFetch(() => documentResponse()).impl });
    expect(await reason(resolver.resolve('did:ion:abc'))).toEqual({
      code: -36002,
      data: { reason: 'unsupportedDidMethod' },
    });
    expect(await reason(resolver.resolve('did:key:zNotAKey'))).toEqual({
      code: -36002,
      data: { reason: 'invalidDid' },
    });
  });
});

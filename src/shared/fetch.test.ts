import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, startTestHost } from '../../test/helpers/host.js';
import { fetchTrusting } from './fetch.js';

const agents = vi.hoisted(() => ({ created: 0 }));

vi.mock('undici', async (importOriginal) => {
  const actual = await importOriginal<typeof import('undici')>();
  class CountingAgent extends actual.Agent {
    constructor(...args: ConstructorParameters<typeof actual.Agent>) {
      super(...args);
      agents.created++;
    }
  }
  return { ...actual, Agent: CountingAgent };
});

afterEach(cleanup);

describe('fetchTrusting', () => {
  it('trusts the given CA and shares one agent per CA across calls', async () => {
    const host = await startTestHost({ flags: { 'tls-self-signed': true } });
    const ca = host.tls!.cert;
    const before = agents.created;
    for (let i = 0; i < 3; i++) {
      const res = await fetchTrusting(ca)(`${host.url}/.well-known/agent-card.json`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(agents.created - before).toBe(1);
  });

  it('is the global fetch without a CA, the request untouched while tracing is off', async () => {
    const response = new Response('ok');
    const global = vi.spyOn(globalThis, 'fetch').mockResolvedValue(response);
    const init = { method: 'POST', headers: { 'x-a': '1' } };
    expect(await fetchTrusting(undefined)('http://127.0.0.1:9/x', init)).toBe(response);
    expect(global).toHaveBeenCalledWith('http://127.0.0.1:9/x', init);
    global.mockRestore();
  });
});

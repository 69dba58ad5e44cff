import { afterEach, describe, expect, it } from 'vitest';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { cleanup, startTestHost } from '../helpers/host.js';

afterEach(cleanup);

const acp = () =>
  acpModule({ producer: { agent_id: 'https://dealer.test/agents/acp', role: 'dealer_agent' } });

describe('ACPspec is advertised only on a TLS interface (seed "The Conformance Rule")', () => {
  it('refuses to start when the public URL is plain http, even though the socket is TLS', async () => {
    await expect(
      startTestHost({
        flags: { 'tls-self-signed': true, 'public-url': 'http://agent.example' },
        modules: [acp()],
      }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('starts with an https public URL and reports it as its URL', async () => {
    const host = await startTestHost({
      flags: { 'tls-self-signed': true, 'public-url': 'https://agent.example' },
      modules: [acp()],
    });
    expect(host.url).toBe('https://agent.example');
  });
});

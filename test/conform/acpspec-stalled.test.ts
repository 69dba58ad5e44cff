import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ACP_EXTENSION_URI } from '../../src/acpspec/constants.js';
import { acpspecChecks } from '../../src/conform/acpspec/index.js';
import { cleanup, onCleanup } from '../helpers/host.js';
import { conformContext, idsWith, runChecks } from './acp-context.js';

afterEach(cleanup);

/** An agent that serves its card and then never answers anything else (a stalled peer). */
async function startStalledAgent(): Promise<string> {
  const stalled: Server = createServer((req, res) => {
    if (req.url !== '/.well-known/agent-card.json') return; // never answered
    res.setHeader('content-type', 'application/json').end(JSON.stringify(card));
  });
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
  const card = {
    name: 'stalled',
    description: 'answers its card only',
    version: '1.0.0',
    supportedInterfaces: [{ url: `${url}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: {
      extensions: [
        {
          uri: ACP_EXTENSION_URI,
          required: false,
          params: {
            acp_version: '0.1',
            schema_url: `${url}/schema.json`,
            accepts: ['snapshot'],
            emits: ['snapshot'],
          },
        },
      ],
    },
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: [],
  };
  onCleanup(() => {
    stalled.closeAllConnections();
    return new Promise<void>((resolve) => stalled.close(() => resolve()));
  });
  return url;
}

describe('the ACPspec checks against a stalled agent', () => {
  it('end within their step timeout: nothing passes but the card, nothing hangs', async () => {
    const url = await startStalledAgent();
    const ctx = { ...(await conformContext(url)), timeoutMs: 300 };
    const outcomes = await runChecks(acpspecChecks, ctx);
    expect(idsWith(outcomes, 'pass')).toEqual(['acpspec-card-params']);
    expect(outcomes.get('acpspec-schema-url')).toMatchObject({ status: 'fail' });
  }, 30_000);
});

import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { taskStateName } from '../../src/a2a/part-codec.js';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { runCli } from '../../src/cli/main.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { cleanup, postJson, startTestHost } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { recordingModule } from '../helpers/recording-binding.js';

afterEach(cleanup);

const V1 = { 'A2A-Version': '1.0' };
const seedMessage = JSON.parse(
  readFileSync(new URL('../fixtures/a2a/seed-000-message.json', import.meta.url), 'utf8'),
) as unknown;

describe('extension echo beyond SendMessage (A2A §4.6)', () => {
  it('echoes an activated extension on SendStreamingMessage, GetTask and CancelTask', async () => {
    const URI = 'https://example.test/ext/v1';
    const { module } = recordingModule({ uri: URI, mediaType: 'application/acmp+json' });
    const host = await startTestHost({ modules: [module] });
    const headers = { ...V1, 'A2A-Extensions': URI };
    const stream = await fetch(`${host.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendStreamingMessage',
        params: { message: seedMessage },
      }),
    });
    await stream.text();
    expect(stream.headers.get('a2a-extensions')).toBe(URI);
    const get = await postJson(
      `${host.url}/a2a/jsonrpc`,
      { jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'missing' } },
      headers,
    );
    expect(get.headers.get('a2a-extensions')).toBe(URI);
    const cancel = await postJson(
      `${host.url}/a2a/jsonrpc`,
      { jsonrpc: '2.0', id: 3, method: 'CancelTask', params: { id: 'missing' } },
      headers,
    );
    expect(cancel.headers.get('a2a-extensions')).toBe(URI);
  });
});

describe('body limit on REST', () => {
  it('answers 413 with a google.rpc.Status and keeps serving; --body-limit changes the limit', async () => {
    const host = await startTestHost({ flags: { 'body-limit': '64k' } });
    const big = JSON.stringify({
      message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(70 * 1024) }] },
    });
    const res = await postJson(`${host.url}/a2a/rest/message:send`, big, V1);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: { code: 413, status: 'RESOURCE_EXHAUSTED' } });
    const ok = await postJson(
      `${host.url}/a2a/rest/message:send`,
      { message: { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'small' }] } },
      V1,
    );
    expect(ok.status).toBe(200);
  });
});

describe('CancelTask over REST on a running task', () => {
  it('stops the work and leaves the task canceled', async () => {
    const host = await startTestHost({
      modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 20 }), heartbeatIntervalMs: 1000 })],
    });
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    const taskId = 'task_rest_cancel_0000000000000001';
    const events = buyer
      .stream({
        task_id: taskId,
        capability: 'slow-count',
        input: { type: 'json', data: { n: 500 } },
        max_price_cu: 1,
      })
      [Symbol.asyncIterator]();
    expect((await events.next()).value).toMatchObject({ kind: 'heartbeat' });
    const rest = await createA2AClient(await fetchAgentCard(host.url), { transport: 'HTTP+JSON' });
    const task = await rest.cancelTask(
      { tenant: '', id: taskId, metadata: undefined },
      { serviceParameters: { 'A2A-Extensions': ACMP_EXTENSION_URI } },
    );
    expect(taskStateName(task.status?.state)).toBe('canceled');
    await expect(async () => {
      for (let s = await events.next(); !s.done; s = await events.next());
    }).rejects.toMatchObject({ code: -33004 });
  });
});

describe.skipIf(!process.env.TEST_PG_URL)('a2a-commerce migrate on PostgreSQL', () => {
  it('migrates a fresh database, is safe to re-run, and a host then serves from it', async () => {
    const db = await freshPgDatabase();
    const io = { out: () => {}, err: () => {}, env: {} };
    expect(await runCli(['migrate', '--db', db], io)).toBe(0);
    expect(await runCli(['migrate', '--db', db], io)).toBe(0);
    const host = await startTestHost({ flags: { db } });
    const client = await createA2AClient(await fetchAgentCard(host.url));
    await expect(client.getTask({ tenant: '', id: 'none' })).rejects.toThrow(/not found/i);
  });
});

import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentExecutor } from '../../src/a2a/binding.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, postJson, startTestHost } from '../helpers/host.js';
import { recordingModule } from '../helpers/recording-binding.js';

afterEach(cleanup);

const seedMessage = JSON.parse(
  readFileSync(new URL('../fixtures/a2a/seed-000-message.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;
const URI = 'https://example.test/ext/v1';
const V1 = { 'A2A-Version': '1.0' };

function rpc(method: string, params: unknown, id: number | string = 1) {
  return { jsonrpc: '2.0', id, method, params };
}

describe('part codec: inbound spellings', () => {
  it('understands seed 000\'s literal message (role "user", snake_case) over JSON-RPC v1.0', async () => {
    const { module, calls } = recordingModule({ uri: URI, mediaType: 'application/acmp+json' });
    const host = await startTestHost({ modules: [module] });
    const res = await postJson(`${host.url}/a2a/jsonrpc`, rpc('SendMessage', { message: seedMessage }), V1);
    expect(res.status).toBe(200);
    expect((res.body as { error?: unknown }).error).toBeUndefined();
    expect(calls).toHaveLength(1);
    const seen = calls[0]!.message;
    expect(seen.role).toBe('user');
    expect(seen.messageId).toBe('msg_9c2f11');
    expect(seen.taskId).toBe('task_a7c923f1');
    expect(seen.parts[0]).toMatchObject({ kind: 'data', mediaType: 'application/acmp+json' });
    expect((seen.parts[0] as { data: unknown }).data).toEqual(
      (seedMessage.parts as { data: unknown }[])[0]!.data,
    );
  });

  it('understands the same message from a v0.3 client (no A2A-Version header, kind "data")', async () => {
    const { module, calls } = recordingModule({ uri: URI, mediaType: 'application/acmp+json' });
    const host = await startTestHost({ modules: [module] });
    const legacy = {
      kind: 'message',
      messageId: 'msg_legacy',
      role: 'user',
      parts: [{ kind: 'data', data: { acmp_method: 'acmp/invoke', params: { task_id: 't1' } } }],
    };
    const res = await postJson(`${host.url}/a2a/jsonrpc`, rpc('message/send', { message: legacy }));
    expect((res.body as { error?: unknown }).error).toBeUndefined();
    expect(calls[0]?.message.role).toBe('user');
    expect(calls[0]?.wireVersion).toBe('0.3');
  });

  it('emits canonical ProtoJSON outbound (ROLE_AGENT, mediaType)', async () => {
    const { module } = recordingModule({ uri: URI, mediaType: 'application/acmp+json' });
    const host = await startTestHost({ modules: [module] });
    const res = await postJson(`${host.url}/a2a/jsonrpc`, rpc('SendMessage', { message: seedMessage }), V1);
    const message = (res.body as { result: { message: { role: string; parts: { mediaType: string }[] } } })
      .result.message;
    expect(message.role).toBe('ROLE_AGENT');
    expect(message.parts[0]!.mediaType).toBe('application/acmp+json');
  });
});

describe('extensions (A2A §4.6)', () => {
  it('echoes an activated extension in the A2A-Extensions response header', async () => {
    const { module } = recordingModule({ uri: URI, mediaType: 'application/acmp+json' });
    const host = await startTestHost({ modules: [module] });
    const res = await postJson(`${host.url}/a2a/jsonrpc`, rpc('SendMessage', { message: seedMessage }), {
      ...V1,
      'A2A-Extensions': `${URI}, https://unknown.test/x`,
    });
    expect(res.headers.get('a2a-extensions')).toBe(URI);
  });

  it('refuses a message when a required extension was not activated (-32008)', async () => {
    const { module, calls } = recordingModule({
      uri: URI,
      mediaType: 'application/acmp+json',
      required: true,
    });
    const host = await startTestHost({ modules: [module] });
    const res = await postJson(`${host.url}/a2a/jsonrpc`, rpc('SendMessage', { message: seedMessage }), V1);
    expect((res.body as { error: { code: number } }).error.code).toBe(-32008);
    expect(calls).toHaveLength(0);
    const rest = await postJson(`${host.url}/a2a/rest/message:send`, { message: seedMessage }, V1);
    expect(rest.status).toBe(400);
    expect(JSON.stringify(rest.body)).toContain('EXTENSION_SUPPORT_REQUIRED');
  });
});

describe('malformed requests keep the host serving', () => {
  // Each refusal must leave the host serving the next request: one host for the lot says so too.
  const plainHost = shared(() => startTestHost());

  it('answers invalid JSON with -32700', async () => {
    const host = plainHost();
    const res = await postJson(`${host.url}/a2a/jsonrpc`, '{"jsonrpc":"2.0",', V1);
    expect((res.body as { error: { code: number } }).error.code).toBe(-32700);
    const rest = await postJson(`${host.url}/a2a/rest/message:send`, '{nope', V1);
    expect(rest.status).toBe(400);
  });

  it('answers an unknown method with -32601 and then still serves', async () => {
    const host = plainHost();
    const res = await postJson(`${host.url}/a2a/jsonrpc`, rpc('NoSuchMethod', {}), V1);
    expect((res.body as { error: { code: number } }).error.code).toBe(-32601);
    const ok = await postJson(`${host.url}/a2a/jsonrpc`, rpc('GetTask', { id: 'missing' }), V1);
    expect((ok.body as { error: { code: number } }).error.code).toBe(-32001);
  });

  it('limits request bodies (413 with a coded error, default 1 MiB)', async () => {
    const host = plainHost();
    const big = JSON.stringify(
      rpc('SendMessage', {
        message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(1024 * 1024 + 10) }] },
      }),
    );
    const res = await postJson(`${host.url}/a2a/jsonrpc`, big, V1);
    expect(res.status).toBe(413);
    expect((res.body as { error: { code: number; data: { reason: string }[] } }).error.data[0]!.reason).toBe(
      'BODY_TOO_LARGE',
    );
    const small = await postJson(`${host.url}/a2a/jsonrpc`, rpc('GetTask', { id: 'missing' }), V1);
    expect(small.status).toBe(200);
  });

  it('never puts internal error text on the wire', async () => {
    const failing: AgentExecutor = {
      execute: () => Promise.reject(new Error('SELECT secret FROM customers WHERE ssn = 123-45-6789')),
      cancelTask: () => Promise.resolve(),
    };
    const host = await startTestHost({ executor: failing });
    const message = { messageId: 'm-fail', role: 'ROLE_USER', parts: [{ text: 'hello' }] };
    for (const method of ['SendMessage', 'SendStreamingMessage']) {
      const res = await fetch(`${host.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...V1 },
        body: JSON.stringify(rpc(method, { message })),
      });
      const text = await res.text();
      expect(text).not.toMatch(/SELECT|secret|123-45-6789/);
      expect(text).toMatch(/Internal error|TASK_STATE_FAILED/);
    }
  });

  it('answers a non-object message with a coded error and no stack trace', async () => {
    const host = plainHost();
    const res = await postJson(
      `${host.url}/a2a/jsonrpc`,
      rpc('SendMessage', { message: 'not-an-object' }),
      V1,
    );
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(ts|js):\d+/);
    expect((res.body as { error: { code: number } }).error.code).toBeLessThan(0);
  });
});

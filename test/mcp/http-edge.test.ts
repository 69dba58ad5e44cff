import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, shared } from '../helpers/cleanup.js';
import { sendRaw } from '../helpers/wire-reply.js';
import {
  acmpHost,
  ERAS,
  httpClient,
  invoke,
  mcpUrl,
  modernRequest,
  newTaskId,
  postMcp,
  sentiment,
} from './helpers.js';

afterEach(cleanup);

/**
 * The host's one read of an MCP POST body (docs/acmp-mcp-binding.md §1, src/mcp/http-body.ts): the
 * shared JSON edge decodes, parses and judges it once, and the SDK serves the parsed value.
 */

const LIMIT = 2048;
const host = shared(() => acmpHost({ flags: { 'body-limit': '2k' } }));

/** A raw 2026-07-28 acmp/invoke whose `input.data` is `DATA`, as JSON text. */
function invokeText(id = 1): { text: string; headers: Record<string, string> } {
  const { body, headers } = modernRequest(
    'acmp/invoke',
    sentiment({ input: { type: 'json', data: 'DATA' } }),
    id,
  );
  return {
    text: JSON.stringify(body),
    headers: { accept: 'application/json, text/event-stream', ...headers },
  };
}

describe('one read of the body, by the shared edge (docs/host.md "Bad input")', () => {
  it('answers bytes that are not UTF-8 with -32700 rule utf8, where the SDK alone would invoke with U+FFFD', async () => {
    const { text, headers } = invokeText();
    const [before, after] = text.split('"DATA"') as [string, string];
    const body = Buffer.concat([
      Buffer.from(`${before}"HON`),
      Buffer.from([0xff]),
      Buffer.from(`DA"${after}`),
    ]);
    const reply = await sendRaw(mcpUrl(host()), { body, headers });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error: Invalid JSON', data: { rule: 'utf8' } },
      id: null,
    });
  });

  it('holds every method to the value profile before the SDK routes it: -32602 depth in-band with the id', async () => {
    // A method the host does not serve: only the edge can answer it with the profile's rule.
    const { body, headers } = modernRequest('x/unknown', { deep: 'DEEP' }, 7);
    const text = JSON.stringify(body).replace('"DEEP"', `${'['.repeat(600)}${']'.repeat(600)}`);
    const reply = await sendRaw(mcpUrl(host()), {
      body: text,
      headers: { accept: 'application/json, text/event-stream', ...headers },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32602,
        message: 'Invalid params',
        data: { detail: "a JSON value is outside the host's limits (depth)", rule: 'depth' },
      },
    });
  });

  it('ignores a notification outside the profile (202, as MCP answers a notification)', async () => {
    const reply = await postMcp(host(), {
      jsonrpc: '2.0',
      method: 'acmp/cancel',
      params: { task_id: 'a\u0000b' },
    });
    expect(reply.status).toBe(202);
  });

  it('answers an empty body and malformed JSON with the SDK parse error', async () => {
    const { headers } = invokeText();
    for (const body of ['', '{"jsonrpc":']) {
      const reply = await sendRaw(mcpUrl(host()), { body, headers });
      expect(reply.status).toBe(400);
      expect(reply.text).toBe(
        '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: Invalid JSON"},"id":null}',
      );
    }
  });
});

describe('the body limit (--body-limit), as before', () => {
  const tooLarge = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Payload Too Large: Request body must not exceed ${LIMIT} bytes"},"id":null}`;

  it('refuses a declared Content-Length over the limit with 413 and closes the connection', async () => {
    const { text, headers } = invokeText();
    const reply = await sendRaw(mcpUrl(host()), {
      body: text.replace('"DATA"', `"${'x'.repeat(LIMIT)}"`),
      headers,
    });
    expect(reply.status).toBe(413);
    expect(reply.headers.get('connection')).toBe('close');
    expect(reply.text).toBe(tooLarge);
  });

  it('refuses a chunked body once more than the limit has arrived', async () => {
    const { headers } = invokeText();
    const chunk = new TextEncoder().encode(' '.repeat(1000));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 5; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const res = await fetch(mcpUrl(host()), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      duplex: 'half',
    });
    expect(res.status).toBe(413);
    expect(await res.text()).toBe(tooLarge);
  });
});

describe('what the edge leaves to the SDK', () => {
  it('answers a POST that is not JSON with the SDK 415', async () => {
    const { text, headers } = invokeText();
    const reply = await sendRaw(mcpUrl(host()), {
      body: text,
      headers: { ...headers, 'content-type': 'text/plain' },
    });
    expect(reply.status).toBe(415);
    expect(reply.body).toMatchObject({ error: { code: -32000 } });
  });

  it('answers GET and DELETE with the SDK 405 (no sessions)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const reply = await sendRaw(mcpUrl(host()), { method, headers: { accept: 'text/event-stream' } });
      expect(reply.status).toBe(405);
    }
  });
});

describe.each(ERAS)('a normal invoke over the parsed body (%s)', (era) => {
  it('sells the capability end to end through the official client, UTF-8 text intact', async () => {
    const { client } = await httpClient(host(), era);
    const taskId = newTaskId();
    const result = await invoke(
      client,
      sentiment({ task_id: taskId, input: { type: 'text', data: 'grüß 😀' } }),
    );
    expect(result).toMatchObject({ task_id: taskId, output: { type: 'json' } });
  });
});

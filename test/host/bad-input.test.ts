import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger, LogFields } from '../../src/shared/logger.js';
import { cleanup, shared } from '../helpers/cleanup.js';
import { startTestHost } from '../helpers/host.js';
import { replyProblems, sendRaw, type RawReply } from '../helpers/wire-reply.js';

afterEach(cleanup);

// Bad input changes nothing a later test could see, so the file shares one host (the logger test
// starts its own: it needs a host built with its logger).
const theHost = shared(() => startTestHost());

const V1 = { 'A2A-Version': '1.0' };
const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n);

/** A JSON-RPC body as text, so that ids and params can be spliced in verbatim. */
function rpcText(method: string, params: string, id = '1'): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`;
}

function message(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }], ...fields };
}

function rpcCode(reply: RawReply): number | undefined {
  return (reply.body as { error?: { code?: number } }).error?.code;
}

function restStatus(reply: RawReply): string | undefined {
  return (reply.body as { error?: { status?: string } }).error?.status;
}

/** Every reply in this file answers a client mistake: coded, 4xx (or a JSON-RPC error), nothing internal. */
function expectClientError(reply: RawReply): void {
  expect(replyProblems(reply)).toEqual([]);
  expect(reply.status).toBeLessThan(500);
}

describe('bodies the host cannot read (docs/host.md "Bad input")', () => {
  it('answers Content-Encoding: gzip on a plain body with -32700 / REST 400', async () => {
    const host = theHost();
    const headers = { ...V1, 'content-encoding': 'gzip' };
    const rpc = await sendRaw(`${host.url}/a2a/jsonrpc`, { body: rpcText('GetTask', '{"id":"x"}'), headers });
    expectClientError(rpc);
    expect(rpcCode(rpc)).toBe(-32700);
    const rest = await sendRaw(`${host.url}/a2a/rest/message:send`, { body: '{}', headers });
    expectClientError(rest);
    expect(restStatus(rest)).toBe('INVALID_ARGUMENT');
  });

  it('answers invalid UTF-8 with -32700 / REST 400 instead of storing U+FFFD', async () => {
    const host = theHost();
    // `HON\xffDA`: the byte 0xFF can never occur in UTF-8.
    const bytes = (text: string): Uint8Array =>
      Buffer.concat(
        text
          .split('~')
          .flatMap((piece, i) =>
            i === 0 ? [Buffer.from(piece)] : [Buffer.from([0xff]), Buffer.from(piece)],
          ),
      );
    const rpc = await sendRaw(`${host.url}/a2a/jsonrpc`, {
      body: bytes(rpcText('GetTask', '{"id":"HON~DA"}')),
      headers: V1,
    });
    expectClientError(rpc);
    expect(rpcCode(rpc)).toBe(-32700);
    const body = bytes(JSON.stringify({ message: message({ parts: [{ text: 'HON~DA' }] }) }));
    const rest = await sendRaw(`${host.url}/a2a/rest/message:send`, { body, headers: V1 });
    expectClientError(rest);
    expect(rest.status).toBe(400);
  });

  it('answers a JSON string body on a tenant REST path with 400', async () => {
    const host = theHost();
    const reply = await sendRaw(`${host.url}/a2a/rest/acme/message:send`, { body: '"hello"', headers: V1 });
    expectClientError(reply);
    expect(reply.status).toBe(400);
  });

  it('answers an undecodable path (%ZZ) with a coded 400', async () => {
    const host = theHost();
    for (const path of ['/a2a/rest/tasks/%ZZ', '/a2a/rest/tasks/%ZZ:cancel']) {
      const reply = await sendRaw(`${host.url}${path}`, {
        method: path.endsWith('cancel') ? 'POST' : 'GET',
        headers: V1,
      });
      expectClientError(reply);
      expect(reply.status).toBe(400);
    }
  });
});

describe('JSON-RPC request objects (JSON-RPC 2.0 §4, §5; A2A v1.0 has no batches)', () => {
  it('answers a batch (array body) with -32600', async () => {
    const host = theHost();
    const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, {
      body: `[${rpcText('GetTask', '{"id":"x"}')}]`,
      headers: V1,
    });
    expectClientError(reply);
    expect(rpcCode(reply)).toBe(-32600);
  });

  it('answers an object or array id with -32600 and a null id', async () => {
    const host = theHost();
    for (const id of ['{"a":1}', '[1,2]', deep(10_000)]) {
      const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, {
        body: rpcText('GetTask', '{"id":"x"}', id),
        headers: V1,
      });
      expectClientError(reply);
      expect(rpcCode(reply)).toBe(-32600);
      expect((reply.body as { id: unknown }).id).toBeNull();
    }
  });
});

describe('method names', () => {
  it('answers a method named after an Object.prototype member with -32601 (found in review)', async () => {
    const host = theHost();
    for (const [method, headers] of [
      ['constructor', {}],
      ['__proto__', {}],
      ['toString', V1],
      ['hasOwnProperty', V1],
    ] as const) {
      const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, { body: rpcText(method, '{}'), headers });
      expectClientError(reply);
      expect(rpcCode(reply)).toBe(-32601);
    }
  });
});

describe('params the SDK would choke on answer -32602 without internal text', () => {
  it('refuses a null part', async () => {
    const host = theHost();
    const params = JSON.stringify({ message: message({ parts: [null] }) });
    const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, {
      body: rpcText('SendMessage', params),
      headers: V1,
    });
    expectClientError(reply);
    expect(rpcCode(reply)).toBe(-32602);
  });

  it('refuses a null part on a v1.0 REST route spoken with A2A-Version 0.3 (found by the fuzzer)', async () => {
    const host = theHost();
    const body = JSON.stringify({
      message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ kind: 'text', text: 'e' }, null] },
    });
    for (const path of ['/a2a/rest/message:send', '/a2a/rest/acme/message:stream']) {
      const reply = await sendRaw(`${host.url}${path}`, { body, headers: { 'A2A-Version': '0.3' } });
      expectClientError(reply);
      expect(reply.status).toBe(400);
    }
  });

  it('refuses v0.3 tasks/pushNotificationConfig/set without a config', async () => {
    const host = theHost();
    const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, {
      body: rpcText('tasks/pushNotificationConfig/set', '{"taskId":"t1"}'),
    });
    expectClientError(reply);
    expect(rpcCode(reply)).toBe(-32602);
  });

  it('refuses v0.3 tasks/cancel with an array id before it reaches the store', async () => {
    const host = theHost();
    const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, { body: rpcText('tasks/cancel', '{"id":[1,2]}') });
    expectClientError(reply);
    expect(rpcCode(reply)).toBe(-32602);
  });

  it('refuses a CancelTask id nested 5,000 deep', async () => {
    const host = theHost();
    const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, {
      body: rpcText('CancelTask', `{"id":${deep(5000)}}`),
      headers: V1,
    });
    expectClientError(reply);
    expect(rpcCode(reply)).toBe(-32602);
  });
});

describe('JSON values outside the edge profile (docs/host.md "Bad input")', () => {
  const dataMessage = (data: string): string =>
    rpcText(
      'SendMessage',
      `{"message":{"messageId":"${crypto.randomUUID()}","role":"ROLE_USER","parts":[{"data":{"n":${data}}}]}}`,
    );

  it('refuses numbers JSON cannot hold exactly, a lone surrogate and U+0000 with -32602 / REST 400', async () => {
    const host = theHost();
    for (const value of ['1e309', '-1e309', '9007199254740993', '"\\ud800"', '"a\\u0000b"']) {
      const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, { body: dataMessage(value), headers: V1 });
      expectClientError(reply);
      expect(rpcCode(reply)).toBe(-32602);
    }
    const rest = await sendRaw(`${host.url}/a2a/rest/message:send`, {
      body: '{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"n":1e309}}]}}',
      headers: V1,
    });
    expectClientError(rest);
    expect(rest.status).toBe(400);
  });

  it('accepts the largest safe integer and ordinary fractions', async () => {
    const host = theHost();
    const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, {
      body: dataMessage('[9007199254740991, -9007199254740991, 0.1, 1e-300]'),
      headers: V1,
    });
    expect(rpcCode(reply)).toBeUndefined();
  });
});

describe('id limits are the same on every store (docs/host.md "Bad input")', () => {
  it('refuses a context id longer than 128 characters and accepts 128', async () => {
    const host = theHost();
    const send = (contextId: string) =>
      sendRaw(`${host.url}/a2a/jsonrpc`, {
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: message({ contextId }) },
        }),
        headers: V1,
      });
    const refused = await send('c'.repeat(129));
    expectClientError(refused);
    expect(rpcCode(refused)).toBe(-32602);
    expect(rpcCode(await send('c'.repeat(128)))).toBeUndefined();
  });

  it('refuses a REST tenant longer than 255 characters', async () => {
    const host = theHost();
    const reply = await sendRaw(`${host.url}/a2a/rest/${'t'.repeat(256)}/message:send`, {
      body: JSON.stringify({ message: message() }),
      headers: V1,
    });
    expectClientError(reply);
    expect(reply.status).toBe(400);
  });

  it('refuses U+0000 in a looked-up task id (the value profile) and answers another control character TaskNotFound', async () => {
    const host = theHost();
    for (const [id, code] of [
      ['a\\u0000b', -32602],
      ['a\\u0007b', -32001],
    ] as const) {
      const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, {
        body: rpcText('GetTask', `{"id":"${id}"}`),
        headers: V1,
      });
      expectClientError(reply);
      expect(rpcCode(reply)).toBe(code);
    }
  });
});

describe("the SDK's console diagnostics", () => {
  it('go to the JSON logger, not to stderr, when a client asks for an unknown task', async () => {
    const lines: { event: string; fields: LogFields | undefined }[] = [];
    const record = (event: string, fields?: LogFields): void => void lines.push({ event, fields });
    const logger: Logger = { debug: record, info: record, warn: record, error: record };
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const consoleWarn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const host = await startTestHost({ logger });
      const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, {
        body: rpcText('SubscribeToTask', '{"id":"missing"}'),
        headers: V1,
      });
      expect(rpcCode(reply)).toBe(-32001);
      expect(consoleError).not.toHaveBeenCalled();
      expect(consoleWarn).not.toHaveBeenCalled();
      expect(lines.map((l) => l.event)).toContain('a2a.sdk_diagnostic');
      expect(JSON.stringify(lines)).not.toContain('missing');
    } finally {
      consoleError.mockRestore();
      consoleWarn.mockRestore();
    }
  });
});

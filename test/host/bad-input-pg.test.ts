import { afterEach, describe, expect, it } from 'vitest';
import { startAcpHost } from '../acpspec/helpers.js';
import { cleanup, shared } from '../helpers/cleanup.js';
import { startTestHost } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { replyProblems, sendRaw, type RawReply } from '../helpers/wire-reply.js';

afterEach(cleanup);

const V1 = { 'A2A-Version': '1.0' };

function rpc(method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
}

function message(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }], ...fields };
}

function rpcCode(reply: RawReply): number | undefined {
  return (reply.body as { error?: { code?: number } }).error?.code;
}

/** Limits enforced at the edge: PostgreSQL (varchar(128), varchar(255), no U+0000 in text) answers as SQLite does. */
describe.skipIf(!process.env.TEST_PG_URL)('id limits on PostgreSQL (docs/host.md "Bad input")', () => {
  // The ids the tests store differ, so they share one host and database; the ACPspec test starts its own
  // (an ACPspec host with TLS).
  const theHost = shared(async () =>
    startTestHost({ flags: { db: await freshPgDatabase() }, migrate: true }),
  );

  it('refuses a context id longer than 128 characters with -32602 and stores one of 128', async () => {
    const host = theHost();
    const refused = await sendRaw(`${host.url}/a2a/jsonrpc`, {
      body: rpc('SendMessage', { message: message({ contextId: 'c'.repeat(129) }) }),
      headers: V1,
    });
    expect(replyProblems(refused)).toEqual([]);
    expect(rpcCode(refused)).toBe(-32602);
    const stored = await sendRaw(`${host.url}/a2a/jsonrpc`, {
      body: rpc('SendMessage', { message: message({ contextId: 'c'.repeat(128) }) }),
      headers: V1,
    });
    expect(rpcCode(stored)).toBeUndefined();
  });

  it('refuses a REST tenant longer than 255 characters with 400 and stores one of 255', async () => {
    const host = theHost();
    const send = (tenant: string) =>
      sendRaw(`${host.url}/a2a/rest/${tenant}/message:send`, {
        body: JSON.stringify({ message: message() }),
        headers: V1,
      });
    const refused = await send('t'.repeat(256));
    expect(replyProblems(refused)).toEqual([]);
    expect(refused.status).toBe(400);
    expect((await send('t'.repeat(255))).status).toBe(200);
  });

  it('refuses U+0000 in a task id with -32602 on every method that reads one', async () => {
    const host = theHost();
    for (const [method, params] of [
      ['GetTask', { id: 'a\u0000b' }],
      ['CancelTask', { id: 'a\u0000b' }],
      ['SendMessage', { message: message({ taskId: 'a\u0000b' }) }],
    ] as const) {
      const reply = await sendRaw(`${host.url}/a2a/jsonrpc`, { body: rpc(method, params), headers: V1 });
      expect(replyProblems(reply)).toEqual([]);
      expect(rpcCode(reply)).toBe(-32602);
    }
  });

  it('answers an ACPspec transaction id PostgreSQL cannot hold with 404 ACP_TRANSACTION_UNKNOWN', async () => {
    const host = await startAcpHost({
      flags: { db: await freshPgDatabase(), 'tls-self-signed': true },
      migrate: true,
    });
    for (const id of ['a%00b', 'x'.repeat(200)]) {
      const reply = await sendRaw(`${host.url}/acp/v0.1/transactions/${id}/state`, {}, host.fetch);
      expect(replyProblems(reply)).toEqual([]);
      expect(reply.body).toMatchObject({ acp_error: { code: 'ACP_TRANSACTION_UNKNOWN' } });
    }
  });
});

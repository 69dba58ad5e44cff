import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAcpClient, type AcpClient } from '../../src/a2a/acp/client.js';
import { ACP_HTTP_ROUTES } from '../../src/acpspec/constants.js';
import type { SequencedAcpEvent } from '../../src/http/acp-client.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { anonymousState, eventOp, producer } from '../helpers/acp-builders.js';
import { cleanup } from '../helpers/host.js';
import {
  codeOf,
  dataPart,
  errorCode,
  freshDelta,
  freshSnapshot,
  postEnvelope,
  sendRaw,
  startAcpHost,
  txId,
  userMessage,
  type AcpTestHost,
} from './helpers.js';

let host: AcpTestHost;
let client: AcpClient;
beforeAll(async () => {
  host = await startAcpHost();
  client = await createAcpClient({ agentUrl: host.url, caCert: host.caCert });
});
afterAll(cleanup);

/** A transaction (no personal data, so no consent events) with the lead's event plus `extra` appended events. */
async function transactionWith(extra: number): Promise<string> {
  const lead = freshSnapshot(txId('events'), anonymousState());
  await client.send(lead);
  for (let i = 1; i <= extra; i++)
    await client.sendDelta(lead.transaction_id, [eventOp(`ev-extra-${i}`)], producer());
  return lead.transaction_id;
}

describe('the event stream is appended to, never replaced (seed "The Conformance Rule"; design "Deltas")', () => {
  it.each([
    [
      'replace /events/0',
      {
        op: 'replace',
        path: '/events/0',
        value: {
          event_id: 'ev-x',
          type: 'x',
          occurred_at: '2025-06-01T12:00:00Z',
          actor: 'a',
          subject: '/transaction',
          data: {},
        },
      },
    ],
    ['remove /events/0', { op: 'remove', path: '/events/0' }],
    ['replace /events', { op: 'replace', path: '/events', value: [] }],
  ] as const)(
    'refuses a patch that tries to %s (ACP_POLICY_VIOLATION) on both bindings',
    async (_label, operation) => {
      const lead = freshSnapshot(txId('rewrite'), anonymousState());
      await client.send(lead);
      const rewrite = { ...freshDelta(lead, []), patch: [operation] };
      expect(errorCode(await sendRaw(host, userMessage([dataPart(rewrite)])))).toBe('ACP_POLICY_VIOLATION');
      const overHttps = await postEnvelope(host, canonicalJson(rewrite));
      expect(overHttps.status).toBe(422);
      expect((overHttps.body['acp_error'] as { code: string }).code).toBe('ACP_POLICY_VIOLATION');
      const { events } = await host.http.events(lead.transaction_id);
      expect(events.map((e) => e.event_id)).toEqual(lead.events.map((e) => e.event_id));
    },
  );

  it('pages the stream in order with a cursor', async () => {
    const id = await transactionWith(3);
    const first = await host.http.events(id, { limit: 2 });
    expect(first.events.map((e) => e.event_id)).toEqual(['ev-lead-1', 'ev-extra-1']);
    expect(first.next).toBe(2);
    const rest = await host.http.events(id, { after: first.next!, limit: 2 });
    expect(rest.events.map((e) => e.event_id)).toEqual(['ev-extra-2', 'ev-extra-3']);
  });

  it('answers an unknown transaction with ACP_TRANSACTION_UNKNOWN (404)', async () => {
    const res = await host.fetch(`${host.url}${ACP_HTTP_ROUTES.events('tx-nobody')}`);
    expect(res.status).toBe(404);
    expect(await codeOf(host.http.events('tx-nobody'))).toBe('ACP_TRANSACTION_UNKNOWN');
  });
});

describe('GET …/events with Accept: text/event-stream (design "HTTPS binding")', () => {
  it('delivers the held events, then follows new ones as they are appended', async () => {
    const id = await transactionWith(1);
    const stop = new AbortController();
    const seen: SequencedAcpEvent[] = [];
    try {
      for await (const event of host.http.follow(id, { signal: stop.signal })) {
        seen.push(event);
        // Append only once the held events arrived, so the next one can only come from following.
        if (seen.length === 2) await client.sendDelta(id, [eventOp('ev-live-1')], producer());
        if (seen.length === 3) break;
      }
    } finally {
      stop.abort();
    }
    expect(seen.map((e) => [e.seq, e.event_id])).toEqual([
      [1, 'ev-lead-1'],
      [2, 'ev-extra-1'],
      [3, 'ev-live-1'],
    ]);
  });

  it('resumes after a cursor', async () => {
    const id = await transactionWith(1);
    const stop = new AbortController();
    const iterator = host.http.follow(id, { after: 2, signal: stop.signal });
    const next = iterator.next();
    await client.sendDelta(id, [eventOp('ev-after-cursor')], producer());
    const step = await next;
    stop.abort();
    await iterator.return();
    expect(step.value).toMatchObject({ seq: 3, event_id: 'ev-after-cursor' });
  });

  it('sends its headers at once, before any new event exists (fetch resolves on headers)', async () => {
    const id = await transactionWith(0);
    const stop = new AbortController();
    try {
      const res = await host.fetch(`${host.url}${ACP_HTTP_ROUTES.events(id)}?after=1`, {
        headers: { accept: 'text/event-stream' },
        signal: stop.signal,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    } finally {
      stop.abort();
    }
  });

  it('resumes after Last-Event-ID (the seq sent as the SSE id)', async () => {
    const id = await transactionWith(1);
    const stop = new AbortController();
    try {
      const res = await host.fetch(`${host.url}${ACP_HTTP_ROUTES.events(id)}`, {
        headers: { accept: 'text/event-stream', 'last-event-id': '1' },
        signal: stop.signal,
      });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
      expect(text).toMatch(/^id: 2\nevent: acp\.event\ndata: \{.*"event_id":"ev-extra-1"/);
    } finally {
      stop.abort();
    }
  });

  it('answers an unknown transaction with an error object instead of an empty stream', async () => {
    const res = await host.fetch(`${host.url}${ACP_HTTP_ROUTES.events('tx-nobody')}`, {
      headers: { accept: 'text/event-stream' },
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { acp_error: { code: string } }).acp_error.code).toBe(
      'ACP_TRANSACTION_UNKNOWN',
    );
  });

  it('ends the follower quietly when its signal aborts', async () => {
    const id = await transactionWith(0);
    const stop = new AbortController();
    const seen: string[] = [];
    for await (const event of host.http.follow(id, { signal: stop.signal })) {
      seen.push(event.event_id);
      stop.abort();
    }
    expect(seen).toEqual(['ev-lead-1']);
  });
});

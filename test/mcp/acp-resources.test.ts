import { afterEach, describe, expect, it } from 'vitest';
import { fetchAgentCard } from '../../src/a2a/client.js';
import { ACP_EXTENSION_URI, ACP_MCP_EXTENSION_ID, ACP_MCP_URIS } from '../../src/acpspec/constants.js';
import { ACP_SCHEMA_TEXT } from '../../src/acpspec/schema.js';
import { fetchTrusting } from '../../src/shared/fetch.js';
import { anonymousState, envelopeIdFor, eventOp, delta, snapshot } from '../helpers/acp-builders.js';
import { cleanup, shared } from '../helpers/cleanup.js';
import {
  acpMcpHost,
  asCaller,
  callTool,
  mcpClient,
  otherBindingsState,
  readState,
  sendHttps,
  updated,
} from './acp-helpers.js';
import { BOB, ERAS, Loose } from './helpers.js';

afterEach(cleanup);

// Every test uses transaction ids of its own, so the file shares one host.
const host = shared(() => acpMcpHost());
let n = 0x7000;
/** A snapshot of a fresh transaction (own ids), without personal data. */
function fresh(prefix: string): ReturnType<typeof snapshot> {
  n += 1;
  return snapshot({
    transaction_id: `${prefix}-${n}`,
    envelope_id: envelopeIdFor(n),
    state: anonymousState(),
  });
}

describe('the ACPspec MCP extension (seed 001 "Declaring Support")', () => {
  it.each(ERAS)(
    'advertises acp_version, schema_url, accepts and emits as the card does (%s)',
    async (era) => {
      const card = await fetchAgentCard(host().url, { caCert: host().caCert });
      const params = card.capabilities?.extensions?.find((e) => e.uri === ACP_EXTENSION_URI)?.params;
      const { client } = await mcpClient(host(), era);
      const caps = client.getServerCapabilities();
      expect(caps?.extensions?.[ACP_MCP_EXTENSION_ID]).toEqual({
        ...params,
        schema_resource: ACP_MCP_URIS.schema,
      });
      expect(caps?.extensions?.['org.a2agora/acmp']).toBeDefined();
      expect(caps?.tools).toBeDefined();
      expect(caps?.prompts).toBeDefined();
      // A stateless 2025-era HTTP exchange could never deliver an update: subscriptions are offered on 2026-07-28.
      expect(caps?.resources?.subscribe).toBe(era === 'modern');
      expect(caps?.resources?.listChanged).toBe(era === 'modern');
      const schema = await fetchTrusting(host().caCert)(String(params?.schema_url));
      expect(await schema.text()).toBe(ACP_SCHEMA_TEXT);
    },
  );
});

describe('transactions as resources', () => {
  it.each(ERAS)('reads a state as the very bytes of the HTTPS and A2A bindings (%s)', async (era) => {
    const s = fresh('tx-read');
    await sendHttps(host(), s);
    const { client } = await mcpClient(host(), era);
    const text = await readState(client, s.transaction_id);
    const others = await otherBindingsState(host(), s.transaction_id);
    expect(text).toBe(others.https);
    expect(text).toBe(others.a2a);
    const { contents } = await client.readResource({ uri: ACP_MCP_URIS.transaction(s.transaction_id) });
    expect(contents[0]).toMatchObject({ mimeType: 'application/acp+json' });
  });

  it('serves the envelope schema as a resource and the transaction template', async () => {
    const { client } = await mcpClient(host(), 'modern');
    const { contents } = await client.readResource({ uri: ACP_MCP_URIS.schema });
    expect((contents[0] as { text: string }).text).toBe(ACP_SCHEMA_TEXT);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      expect.objectContaining({
        uriTemplate: 'acp://transactions/{transaction_id}',
        mimeType: 'application/acp+json',
      }),
    ]);
  });

  it('lists the caller’s transactions in pages of 100 with an opaque cursor; a forged cursor is -32602', async () => {
    // A caller of its own (bob), so the count is exactly what this test created.
    const bobHttp = asCaller(host(), BOB);
    const ids: string[] = [];
    for (let i = 0; i < 101; i += 8) {
      const batch = Array.from({ length: Math.min(8, 101 - i) }, () => fresh('tx-page'));
      await Promise.all(batch.map((s) => sendHttps(bobHttp, s)));
      ids.push(...batch.map((s) => s.transaction_id));
    }
    const { client } = await mcpClient(host(), 'modern', BOB);
    // The raw first page (the client's listResources() without a cursor walks every page itself).
    const first = (await client.request({ method: 'resources/list', params: {} }, Loose)) as {
      resources: { uri: string; name: string }[];
      nextCursor?: string;
    };
    expect(first.resources[0]?.uri).toBe(ACP_MCP_URIS.schema);
    expect(first.resources).toHaveLength(101);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.listResources({ cursor: first.nextCursor });
    expect(second.nextCursor).toBeUndefined();
    const listed = [...first.resources.slice(1), ...second.resources].map((r) => r.name);
    expect(listed).toEqual([...ids].sort());
    const all = await client.listResources();
    expect(all.resources.map((r) => r.name)).toEqual(['acpspec-envelope-schema', ...listed]);
    await expect(client.listResources({ cursor: 'not-a-cursor!' })).rejects.toMatchObject({ code: -32602 });
  });

  it.each(ERAS)('never lists or reads another caller’s transaction (%s)', async (era) => {
    const s = fresh('tx-alice');
    await sendHttps(host(), s);
    const { client } = await mcpClient(host(), era, BOB);
    const uri = ACP_MCP_URIS.transaction(s.transaction_id);
    expect((await client.listResources()).resources.map((r) => r.uri)).not.toContain(uri);
    await expect(client.readResource({ uri })).rejects.toMatchObject({ code: -32602, data: { uri } });
    const state = await callTool(client, 'acp_request_state', { transaction_id: s.transaction_id });
    expect(state.structured).toMatchObject({ acp_error: { code: 'ACP_TRANSACTION_UNKNOWN' } });
  });
});

describe('subscriptions (2026-07-28 subscriptions/listen)', () => {
  it('notifies on an envelope accepted over HTTPS and on one accepted through MCP', async () => {
    const s = fresh('tx-sub');
    const ack = await sendHttps(host(), s);
    const uri = ACP_MCP_URIS.transaction(s.transaction_id);
    const rec = await mcpClient(host(), 'modern');
    await rec.client.listen({ resourceSubscriptions: [uri] });
    await sendHttps(host(), delta(s, [eventOp('ev-https')], { envelope_id: envelopeIdFor(++n) }));
    await updated(rec, uri, 1);
    const { structured } = await callTool(rec.client, 'acp_apply_delta', {
      transaction_id: s.transaction_id,
      parent_envelope_id: (await host().http.state(s.transaction_id)).envelope.envelope_id,
      patch: [eventOp('ev-mcp')],
    });
    expect(structured).toMatchObject({ acp_ack: { transaction_id: ack.transaction_id } });
    await updated(rec, uri, 2);
  });

  it('never tells a caller that another caller’s transaction changed', async () => {
    const alices = fresh('tx-sub-alice');
    await sendHttps(host(), alices);
    const bobs = fresh('tx-sub-bob');
    const bobHttp = asCaller(host(), BOB);
    await sendHttps(bobHttp, bobs);
    const bob = await mcpClient(host(), 'modern', BOB);
    const alicesUri = ACP_MCP_URIS.transaction(alices.transaction_id);
    const bobsUri = ACP_MCP_URIS.transaction(bobs.transaction_id);
    await bob.client.listen({ resourceSubscriptions: [alicesUri, bobsUri] });
    await sendHttps(host(), delta(alices, [eventOp('ev-a')], { envelope_id: envelopeIdFor(++n) }));
    const bobsDelta = delta(bobs, [eventOp('ev-b')], { envelope_id: envelopeIdFor(++n) });
    await sendHttps(bobHttp, bobsDelta);
    // One stream delivers in order: once bob's own update is there, alice's would have come before it.
    await updated(bob, bobsUri, 1);
    expect(bob.notifications.filter((x) => x.params.uri === alicesUri)).toEqual([]);
  });

  it('does not notify again for an idempotent replay (nothing was committed)', async () => {
    const a = fresh('tx-replay');
    const b = fresh('tx-replay-other');
    await sendHttps(host(), a);
    await sendHttps(host(), b);
    const [uriA, uriB] = [a, b].map((s) => ACP_MCP_URIS.transaction(s.transaction_id)) as [string, string];
    const rec = await mcpClient(host(), 'modern');
    await rec.client.listen({ resourceSubscriptions: [uriA, uriB] });
    const once = delta(a, [eventOp('ev-once')], { envelope_id: envelopeIdFor(++n) });
    const ack = await sendHttps(host(), once);
    expect(await sendHttps(host(), once)).toEqual(ack);
    await sendHttps(host(), delta(b, [eventOp('ev-other')], { envelope_id: envelopeIdFor(++n) }));
    // One stream delivers in order: a replay's update would have come before b's.
    await updated(rec, uriB, 1);
    expect(rec.notifications.filter((x) => x.params.uri === uriA)).toHaveLength(1);
  });
});

describe('resources.listChanged (2026-07-28 subscriptions/listen)', () => {
  const listChanges = (rec: { notifications: { method: string }[] }): number =>
    rec.notifications.filter((x) => x.method === 'notifications/resources/list_changed').length;

  it('tells the creator’s streams, and no other caller’s, when a snapshot creates a transaction', async () => {
    const s = fresh('tx-list');
    const uri = ACP_MCP_URIS.transaction(s.transaction_id);
    const alice = await mcpClient(host(), 'modern');
    await alice.client.listen({ resourcesListChanged: true, resourceSubscriptions: [uri] });
    const bob = await mcpClient(host(), 'modern', BOB);
    await bob.client.listen({ resourcesListChanged: true });
    await sendHttps(host(), s);
    while (listChanges(alice) < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    // Extending a transaction changes its contents, not the list.
    await sendHttps(host(), delta(s, [eventOp('ev-list')], { envelope_id: envelopeIdFor(++n) }));
    await updated(alice, uri, 2);
    expect(listChanges(alice)).toBe(1);
    const bobs = fresh('tx-list-bob');
    await sendHttps(asCaller(host(), BOB), bobs);
    while (listChanges(bob) < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(listChanges(alice)).toBe(1);
  });
});
